"""`asaql run PROJECT_DIR`: a VS Code Azure Stream Analytics project read unchanged — its query,
job configuration, inputs and outputs (files.py), mapped to asaql's inputs and outputs
(bindings.py), live endpoints through Kafka (live.py). See docs/projects.md."""
