"""The idempotency table, as Powertools' DynamoDB persistence layer sees it (key `id`, TTL on
`expiration`), on the service's DynamoDB client."""

from __future__ import annotations

from functools import cache

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

from evalsvc.settings import get_settings
from evalsvc.storage import dynamo


@cache
def _layer(table: str, endpoint: str | None, region: str) -> DynamoDBPersistenceLayer:
    return DynamoDBPersistenceLayer(table_name=table, boto3_client=dynamo.client())


def persistence_layer() -> DynamoDBPersistenceLayer:
    settings = get_settings()
    return _layer(settings.idempotency_table, settings.dynamodb_endpoint_url, settings.region)


def reset() -> None:
    _layer.cache_clear()
