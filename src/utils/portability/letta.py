"""The cortex as Letta-style memory blocks in an Agent File (`.af`) shaped JSON.

Shape: top-level `agents` (one, whose `block_ids` name its blocks) and `blocks` (each `label`,
`value`, `limit` = the cortex budget, `description`), plus the legacy `core_memory` list on the
agent, so both older and newer `.af` readers find the three blocks.
"""
from datetime import UTC, datetime

from ..models.personas import Persona

BLOCKS = {
    "memory.md": ("memory", "Facts and shared experiences the persona remembers about the "
                            "person, in its own words."),
    "soul.md": ("soul", "The persona's own development: who it is becoming."),
    "relationship.md": ("relationship", "The dynamics between the persona and the person."),
}


def agent_file(persona: Persona, files: dict, budget: int) -> dict:
    """The `.af` document for `persona` with `files` = `{filename: {content, revision}}`."""
    blocks = [{"id": f"block-{index}", "label": label, "value": files[name]["content"],
               "limit": budget, "description": description, "read_only": False,
               "metadata": {"persona_cortex": {"filename": name,
                                               "revision": files[name]["revision"]}}}
              for index, (name, (label, description)) in enumerate(BLOCKS.items())]
    agent = {"id": "agent-0", "name": persona.name, "description": persona.description,
             "agent_type": "memgpt_agent", "system": "", "block_ids": [b["id"] for b in blocks],
             "core_memory": [{k: v for k, v in b.items() if k != "id"} for b in blocks],
             "tool_ids": [], "tags": list(persona.tags), "messages": [],
             "metadata": {"persona_cortex": {"persona_id": persona.id, "format_version": 1}}}
    return {"agents": [agent], "blocks": blocks, "groups": [], "files": [], "sources": [],
            "tools": [], "mcp_servers": [],
            "metadata": {"exported_by": "persona-cortex"},
            "created_at": datetime.now(UTC).isoformat(timespec="seconds")}


_LABELS = {"memory": "memory.md", "human": "memory.md", "soul": "soul.md",
           "persona": "soul.md", "relationship": "relationship.md"}


def is_agent_file(document: dict) -> bool:
    """True for an `.af`-shaped document (top-level `agents`, no card `spec`)."""
    return isinstance(document.get("agents"), list) and "spec" not in document


def parse(document: dict) -> dict:
    """`{version, fields, cortex, ignored}` from an agent file: its first agent becomes the
    persona, its memory blocks the cortex (`memory`/`human` → memory.md, `soul`/`persona` →
    soul.md, `relationship` → relationship.md)."""
    from .errors import invalid_card
    agents = document["agents"]
    agent = agents[0] if agents and isinstance(agents[0], dict) else None
    if agent is None or not isinstance(agent.get("name"), str) or not agent["name"].strip():
        raise invalid_card("not_a_card", "The agent file has no agent with a name.")
    cortex, ignored = {}, []
    for block in _blocks(document, agent):
        label, value = block.get("label"), block.get("value")
        target = _LABELS.get(label) if isinstance(label, str) else None
        if target is None or not isinstance(value, str):
            ignored.append(f"memory block `{str(label)[:40]}` is not kept")
        elif target in cortex:
            ignored.append(f"memory block `{label}` is not kept (its file is taken)")
        else:
            cortex[target] = value
    if len(agents) > 1:
        ignored.append("only the first agent is imported")
    if agent.get("system"):
        ignored.append("the agent's system prompt is not used")
    description = agent.get("description") if isinstance(agent.get("description"), str) else ""
    fields = {"name": agent["name"].strip(), "description": description,
              "alternate_greetings": [], "tags": [], "extensions": {}, "card": {}}
    return {"version": None, "fields": fields, "cortex": cortex or None, "ignored": ignored}


def _blocks(document: dict, agent: dict) -> list[dict]:
    """The agent's blocks: top-level `blocks` named by `block_ids`, else its `core_memory`
    (or `memory_blocks`). A block list of the wrong shape refuses the file: read as "no
    blocks", it would import an empty persona that looks like a success."""
    from .errors import invalid_card
    shapes = [("blocks", document), ("block_ids", agent), ("core_memory", agent),
              ("memory_blocks", agent)]
    for key, holder in shapes:
        if holder.get(key) is not None and not isinstance(holder[key], list):
            raise invalid_card("bad_blocks", f"The agent file's `{key}` must be a list.")
    ids = agent.get("block_ids")
    if isinstance(ids, list) and isinstance(document.get("blocks"), list):
        by_id = {b.get("id"): b for b in document["blocks"] if isinstance(b, dict)}
        return [by_id[i] for i in ids if isinstance(i, str) and i in by_id]
    for key in ("core_memory", "memory_blocks"):
        if isinstance(agent.get(key), list):
            return [b for b in agent[key] if isinstance(b, dict)]
    return []
