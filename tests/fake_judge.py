"""A fake OpenAI-compatible judge on 127.0.0.1: `POST /v1/chat/completions`, answers scripted
per test (status, content), with a fixed latency if asked."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# (HTTP status, message content or raw body for non-200), optionally with response headers
Answer = tuple[int, str] | tuple[int, str, dict[str, str]]


def polite_judge(request: dict[str, Any]) -> Answer:
    """Scores 5 when the judged output says please, else 2; the reason says which."""
    user = request["messages"][-1]["content"]
    output = re.search(r"<output>\n(.*?)\n</output>", user, re.DOTALL)
    text = output.group(1) if output else ""
    if "please" in text.lower():
        return 200, json.dumps({"reason": "The output says please.", "score": 5})
    return 200, json.dumps({"reason": "The output never says please.", "score": 2})


def fake_llm(request: dict[str, Any]) -> Answer:
    """Answers every structured request the service makes, by the schema it names: verdicts
    (polite_judge), questions, variants and improved prompts."""
    name = request["response_format"]["json_schema"]["name"]
    user = request["messages"][-1]["content"]
    if name == "record_questions":
        questions = ["Is the answer in English?", "Is the answer under 80 words?"]
        return 200, json.dumps({"questions": questions})
    if name == "record_variants":
        count = int(re.search(r"Write (\d+) new exchanges", user).group(1))  # type: ignore[union-attr]
        seed = re.search(r"<example_input>\n(.*?)\n</example_input>", user, re.DOTALL)
        base = seed.group(1) if seed else "question"
        variants = [
            {"input": f"{base} (variant {k})", "output": f"Please see answer {k}."}
            for k in range(1, count + 1)
        ]
        return 200, json.dumps({"variants": variants})
    if name == "record_prompt":
        original = re.search(r"<original_prompt>\n(.*?)\n</original_prompt>", user, re.DOTALL)
        text = original.group(1) if original else ""
        return 200, json.dumps({"improved_prompt": f"{text}\nAlways say please."})
    return polite_judge(request)


def usage_of(request: dict[str, Any], content: str) -> dict[str, int]:
    """Token counts as a byte-level tokenizer might give them: about one token for every four
    bytes of each message's text, plus a few for its role markers."""
    prompt = sum(
        4 + -(-len(str(m.get("content", "")).encode()) // 4) for m in request.get("messages", [])
    )
    completion = -(-len(content.encode()) // 4)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def byte_usage(request: dict[str, Any], content: str) -> dict[str, int]:
    """The most a tokenizer can count (one token a byte): every byte of every message, the
    schema and its name, a few tokens of markers per message; and the whole answer, up to the
    request's max_tokens (a model stops there)."""
    sent = [str(m.get("content", "")) for m in request.get("messages", [])]
    schema = request.get("response_format", {}).get("json_schema", {})
    sent += [json.dumps(schema.get("schema", {})), str(schema.get("name", ""))]
    prompt = sum(len(text.encode()) for text in sent) + 4 * len(request.get("messages", [])) + 3
    completion = min(int(request["max_tokens"]), len(content.encode()))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def service_env(judge: FakeJudge) -> dict[str, str]:
    """The settings that point the service's LLM at `judge`."""
    return {
        "EVALSVC_LLM": "openai:fake-judge",
        "OPENAI_BASE_URL": judge.base_url,
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
    }


class FakeJudge:
    def __init__(
        self, answer: Callable[[dict[str, Any]], Answer] = fake_llm, latency: float = 0.0
    ) -> None:
        self.answer = answer
        self.latency = latency
        # What answers say they used, as OpenAI's do (`usage`); None: they say nothing.
        self.usage: Callable[[dict[str, Any], str], dict[str, int]] | None = usage_of
        # Every reply's `usage`, in order.
        self.reported: list[dict[str, int]] = []
        self.requests: list[dict[str, Any]] = []
        # The Authorization header of every request, in order (None: none was sent).
        self.authorizations: list[str | None] = []
        self.request_times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.first_request_at: float | None = None
        self.last_response_at: float | None = None
        self._lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    def verdicts_asked(self) -> list[tuple[str, str, str]]:
        """(question, input, output) of every verdict request received, in order."""
        asked = []
        for request in self.requests:
            if request["response_format"]["json_schema"]["name"] != "record_verdict":
                continue
            user = request["messages"][-1]["content"]
            parts = [
                re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.DOTALL)
                for tag in ("question", "input", "output")
            ]
            asked.append(tuple(m.group(1) if m else "" for m in parts))
        return asked  # type: ignore[return-value]

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        judge = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # One write per response, sent at once: no Nagle/delayed-ACK stalls on loopback.
            wbufsize = -1
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with judge._lock:
                    if judge.first_request_at is None:
                        judge.first_request_at = time.perf_counter()
                    judge.requests.append(body)
                    judge.authorizations.append(self.headers.get("Authorization"))
                    judge.request_times.append(time.monotonic())
                    judge.in_flight += 1
                    judge.max_in_flight = max(judge.max_in_flight, judge.in_flight)
                try:
                    if judge.latency:
                        time.sleep(judge.latency)
                    answer = judge.answer(body)
                    status, content = answer[0], answer[1]
                    extra_headers: dict[str, str] = answer[2] if len(answer) > 2 else {}  # type: ignore[misc]
                finally:
                    with judge._lock:
                        judge.in_flight -= 1
                        judge.last_response_at = time.perf_counter()
                if status == 200:
                    reply: dict[str, Any] = {
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}}
                        ]
                    }
                    if judge.usage is not None:
                        reply["usage"] = judge.usage(body, content)
                        with judge._lock:
                            judge.reported.append(reply["usage"])
                    payload = json.dumps(reply).encode()
                else:
                    payload = content.encode()
                self.send_response(status)
                for name, value in extra_headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler

    @contextmanager
    def running(self) -> Iterator[FakeJudge]:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()


def sequence(*answers: Answer) -> Callable[[dict[str, Any]], Answer]:
    """Answers in order, then the last one forever."""
    remaining = list(answers)
    lock = threading.Lock()

    def answer(_request: dict[str, Any]) -> Answer:
        with lock:
            return remaining.pop(0) if len(remaining) > 1 else remaining[0]

    return answer
