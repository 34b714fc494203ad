"""Pictures of a job: its diagram, a live status page, a run report (HTML, no network)."""
