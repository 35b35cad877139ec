"""HTTP: the FastAPI app factory, error mapping, authentication dependency and routers.

Importing this package stops FastAPI from importing pydantic.v1 as routes are declared
(fastapi_v1), before any route module declares one."""

from evalsvc.api import fastapi_v1

fastapi_v1.install()
