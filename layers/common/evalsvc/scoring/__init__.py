"""Scoring: deterministic checks, and (with a provider configured) the LLM judge."""
