"""Large response bodies serialised once, without a second validation pass."""

import json
from typing import Any

from fastapi import Response


def json_response(content: Any) -> Response:
    body = json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(content=body, media_type="application/json")
