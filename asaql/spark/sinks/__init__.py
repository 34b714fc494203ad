"""What a run writes: each micro-batch's rows to files, folders, topics and the errors file, exactly once."""
