"""OTLP trace ingestion, the part without HTTP or storage: `decode.decode_export` reads an
OTLP/HTTP export body (protobuf or OTLP/JSON, gzip or not, within bounds), and
`mapping.map_export` maps its OpenTelemetry GenAI spans to pairs, with the spans it left out
and why (`mapping.partial_success`, `mapping.export_response`: the answer to the export)."""
