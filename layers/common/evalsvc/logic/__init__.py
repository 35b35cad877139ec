"""Business rules, one module per use case. No HTTP here, and no boto3."""
