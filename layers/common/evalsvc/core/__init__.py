"""What every layer uses: domain errors, settings, the one logger/tracer/metrics, deadlines,
backoff, identifiers and the control characters a display obeys. Imports nothing of the
service."""
