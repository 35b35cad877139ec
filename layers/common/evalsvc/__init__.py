"""Evaluation service for LLM applications: the shared layer every function imports."""
