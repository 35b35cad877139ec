"""The datasets table's stream: a kept version whose record TTL removed is purged (its pairs
deleted, a tombstone left). The logic lives in the layer."""

from evalsvc.handlers.background import purge_handler

handler = purge_handler
