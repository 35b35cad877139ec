"""What a dataset version occupies in DynamoDB, for the minimum number of 1 MB query pages."""

from __future__ import annotations

import math
import os

from evalsvc.models.datasets import DatasetHeader
from evalsvc.storage import dynamo
from evalsvc.storage.datasets import version_pk


def stored_bytes(header: DatasetHeader) -> int:
    """Bytes of every item of the dataset's current version."""
    pages = (
        dynamo.client()
        .get_paginator("query")
        .paginate(
            TableName=os.environ["DATASETS_TABLE"],
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={
                ":pk": {
                    "S": version_pk(header.tenant, header.kind, header.dataset_id, header.version)
                }
            },
        )
    )
    return sum(dynamo.item_size(item) for page in pages for item in page["Items"])


def query_pages(size: int) -> int:
    """The fewest 1 MB Query pages that can return `size` bytes."""
    return max(1, math.ceil(size / 1_000_000))
