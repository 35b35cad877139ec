"""GET /app, GET /app/{proxy+}: the review app's files (E9). The serving lives in the layer."""

from pathlib import Path

from evalsvc.handlers.review_app import WebApp

handler = WebApp(Path(__file__).resolve().parent / "static").handle_api_gateway
