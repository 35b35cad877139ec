"""The Lambda entry points' side in the layer: an API route's handler (`http`), the queue,
stream and schedule workers (`background`) and the review app's static files (`review_app`).
functions/<name>/app.py is a few lines that build one of these. Nothing else imports `api`."""
