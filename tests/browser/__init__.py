"""Browser tests: pages (the HTML reports) loaded in a real headless Chromium, with the network cut
off. The harness is tests/browser/chromium.py; the fixtures are in tests/browser/conftest.py."""
