"""The one place the Powertools logger, tracer and metrics are created."""

from aws_lambda_powertools import Logger, Metrics, Tracer

SERVICE = "evalsvc"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace="EvalService", service=SERVICE)
