"""The embedded local run: DynamoDB tables from template.yaml, an in-process DynamoDB server
with snapshots on disk, and the uvicorn server. Needs the `local` extra."""
