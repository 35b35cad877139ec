"""Evaluation service for LLM applications: the shared layer every function imports."""

# The service's version, as pyproject.toml names it (a test holds them equal): every result
# records the version that produced it (E7's inputs.service_version).
__version__ = "0.1.0"
