"""The headers every page the service draws for a browser carries beside its own
Content-Security-Policy: no type sniffing, no referrer, and no other origin's window or
resource reaching it."""

BROWSER_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
