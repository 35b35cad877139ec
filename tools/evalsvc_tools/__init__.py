"""What runs beside the service but never inside a Lambda: the embedded local server
(`evalsvc serve`, `make run`) and the operator's command line (`evalsvc keys …`, `--local`).
Kept out of the Lambda layer (layers/common), which ships the `evalsvc` package alone."""
