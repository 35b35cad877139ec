"""The only code that talks to DynamoDB: one repository module per table."""
