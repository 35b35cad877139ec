"""HTTP: the FastAPI app factory, error mapping, authentication dependency and routers."""
