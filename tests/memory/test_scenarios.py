"""The memory life cycle as a specification: facts are told across sessions, changed, and taken
back in every way a person can, and after each step memory.md and its revision trail say exactly
what the persona should know and why.

Rules the scenario shows:
- an update learns from the conversation and anchors its revision to the messages;
- taking back messages memory learned from reconciles memory: directly (no model call) when the
  revisions that came only from them are still on top of their file, otherwise by a model run
  that sees the retracted messages and what replaced them;
- the person's own edits are never undone; messages never learned from need nothing.
"""
from tests.fakes.claude import replies
from tests.memory.support import add_line

LEIPZIG, DRESDEN, HALLE = ("- Jonas lives in Leipzig.", "- Jonas lives in Dresden.",
                           "- Jonas lives in Halle.")
PIXEL, TEA, IDA = ("- Jonas has a cat named Pixel.", "- Jonas likes green tea.",
                   "- Jonas's sister Ida visits in May.")


class Spec:
    """Steps of a scenario; each checks how many model calls memory needed."""

    def __init__(self, convo):
        self.convo = convo
        self.pid = convo.persona()
        self.sessions: dict[str, str] = {}

    def session(self, name: str) -> None:
        self.sessions[name] = self.convo.session(self.pid)

    def tell(self, name: str, text: str, *, learns: str | None = None,
             changes: tuple[str, str] | None = None) -> None:
        """The person says something; the next update learns or changes one line."""
        self.convo.say(self.sessions[name], text, "I see.")
        call = add_line(learns) if learns else ("str_replace", {
            "filename": "memory.md", "old_str": changes[0], "new_str": changes[1]})
        self.convo.remember(self.pid, call, summary=f"Noted: {text}")

    def person_writes(self, line: str) -> None:
        self.convo.edit(self.pid, self.convo.memory(self.pid) + line + "\n")

    def take_back(self, action, *, model_fix=None) -> None:
        """Runs `action` (a retraction) and the reconciliation; `model_fix` is the edit the
        model makes, or None when the direct path must need no model call at all."""
        action()
        if model_fix is not None:
            self.convo.script.update(replies.tool_use([("str_replace", {
                "filename": "memory.md", "old_str": model_fix[0], "new_str": model_fix[1]})]),
                replies.text(f"Corrected: {model_fix[1] or 'removed'}"))
        before = len(self.convo.reconcile_calls())
        jobs = self.convo.run_jobs()
        assert all(job.status == "done" for job in jobs), jobs
        assert len(self.convo.reconcile_calls()) - before == (0 if model_fix is None else 2)

    def delete_last(self, name: str):
        return lambda: self.convo.call("DELETE", f"/api/sessions/{self.sessions[name]}"
                                                 "/messages/last")

    def delete_session(self, name: str):
        return lambda: self.convo.call("DELETE", f"/api/sessions/{self.sessions[name]}")

    def edit_first(self, name: str, text: str):
        def edit():
            first = self.convo.messages(self.sessions[name])[0]
            self.convo.call("PATCH", f"/api/messages/{first['id']}", {"content": text})
        return edit

    def knows(self, *present: str, forgot: tuple = ()) -> None:
        memory = self.convo.memory(self.pid)
        for line in present:
            assert line + "\n" in memory, f"should remember {line!r}:\n{memory}"
        for line in forgot:
            assert line not in memory, f"should have forgotten {line!r}:\n{memory}"

    def trail(self) -> list[tuple[str, str]]:
        return [(r["author"], r["summary"]) for r in reversed(self.convo.history(self.pid))]


def test_a_week_of_memory(convo):
    spec = Spec(convo)
    spec.session("monday")
    spec.tell("monday", "I live in Leipzig.", learns=LEIPZIG)
    spec.session("tuesday")
    spec.tell("tuesday", "I adopted a cat named Pixel.", learns=PIXEL)
    spec.tell("tuesday", "We moved to Dresden!", changes=(LEIPZIG, DRESDEN))
    spec.person_writes(TEA)
    spec.knows(DRESDEN, PIXEL, TEA, forgot=(LEIPZIG,))

    # The move was a joke: its message goes. The person's line sits on top, so the model
    # corrects the entry; the person's line stays.
    spec.take_back(spec.delete_last("tuesday"), model_fix=(DRESDEN, LEIPZIG))
    spec.knows(LEIPZIG, PIXEL, TEA, forgot=(DRESDEN,))

    # A whole session deleted while its revision is still on top: a direct revert.
    spec.session("wednesday")
    spec.tell("wednesday", "My sister Ida visits in May.", learns=IDA)
    spec.take_back(spec.delete_session("wednesday"))
    spec.knows(LEIPZIG, PIXEL, TEA, forgot=(IDA,))

    # Monday's message corrected: the model sees the old text and its replacement.
    spec.take_back(spec.edit_first("monday", "I live in Halle."), model_fix=(LEIPZIG, HALLE))
    spec.knows(HALLE, PIXEL, TEA, forgot=(LEIPZIG, DRESDEN, IDA))

    assert spec.trail() == [
        ("template", "Created from the template"),
        ("ai", "Noted: I live in Leipzig."),
        ("ai", "Noted: I adopted a cat named Pixel."),
        ("ai", "Noted: We moved to Dresden!"),
        ("user", ""),
        ("ai", f"Corrected: {LEIPZIG}"),
        ("ai", "Noted: My sister Ida visits in May."),
        ("ai", "reverted: message deleted"),
        ("ai", f"Corrected: {HALLE}"),
    ]
    history = convo.history(spec.pid)
    assert history[1]["reverts"] == history[2]["rev"], "the revert names what it undid"
    assert all(r["source"]["kind"] == "retracted" for r in (history[0], history[1], history[3]))


def test_what_memory_never_learned_needs_nothing(convo):
    spec = Spec(convo)
    spec.session("monday")
    spec.tell("monday", "I live in Leipzig.", learns=LEIPZIG)
    convo.say(spec.sessions["monday"], "I might get a parrot.", "Oh!")
    trail = spec.trail()
    spec.take_back(spec.delete_last("monday"))
    assert spec.trail() == trail, "no revision for a message memory never learned from"
    spec.knows(LEIPZIG)
