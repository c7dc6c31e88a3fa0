"""The cortex as Letta-style memory blocks in an Agent File (`.af`) shaped JSON.

Shape: top-level `agents` (one, whose `block_ids` name its blocks) and `blocks` (each `label`,
`value`, `limit` = the cortex budget, `description`), plus the legacy `core_memory` list on the
agent, so both older and newer `.af` readers find the three blocks.
"""
from datetime import datetime, timezone

BLOCKS = {
    "memory.md": ("memory", "Facts and shared experiences the persona remembers about the "
                            "person, in its own words."),
    "soul.md": ("soul", "The persona's own development: who it is becoming."),
    "relationship.md": ("relationship", "The dynamics between the persona and the person."),
}


def agent_file(persona: dict, files: dict, budget: int) -> dict:
    """The `.af` document for `persona` with `files` = `{filename: {content, revision}}`."""
    blocks = [{"id": f"block-{index}", "label": label, "value": files[name]["content"],
               "limit": budget, "description": description, "read_only": False,
               "metadata": {"persona_cortex": {"filename": name,
                                               "revision": files[name]["revision"]}}}
              for index, (name, (label, description)) in enumerate(BLOCKS.items())]
    agent = {"id": "agent-0", "name": persona["name"], "description": persona.get("description", ""),
             "agent_type": "memgpt_agent", "system": "", "block_ids": [b["id"] for b in blocks],
             "core_memory": [{k: v for k, v in b.items() if k != "id"} for b in blocks],
             "tool_ids": [], "tags": list(persona.get("tags") or []), "messages": [],
             "metadata": {"persona_cortex": {"persona_id": persona["id"], "format_version": 1}}}
    return {"agents": [agent], "blocks": blocks, "groups": [], "files": [], "sources": [],
            "tools": [], "mcp_servers": [],
            "metadata": {"exported_by": "persona-cortex"},
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
