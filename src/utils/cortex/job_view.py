"""A cortex job as the API shows it (DESIGN §7)."""


def job_for_api(job: dict) -> dict:
    """The §7 job shape: `{id, persona_id, status, files, error, ...}`."""
    return {key: job[key] for key in (
        "id", "persona_id", "status", "files", "error", "error_message", "retryable", "trigger",
        "reason", "proposal_id",
        "summary", "usage", "message_from", "message_to", "created_at", "started_at",
        "finished_at", "attempted")}
