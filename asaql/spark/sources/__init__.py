"""What a run reads: inputs (files, topics, reference data) as the events frame, their schema and records."""
