"""A fake OpenAI-compatible judge on 127.0.0.1: `POST /v1/chat/completions`, answers scripted
per test (status, content), with a fixed latency if asked, taking structured output the way one
family of servers does (FAMILIES): what it refuses, and how its answer comes back. It serves
`POST /v1/embeddings` too: by default a hashed bag of words (`hashed_embeddings`: texts sharing
words have close vectors), or answers scripted per test like the judge's.

The rag: metrics' two calls (scoring.rag) are answered so that a test can predict the score:
the claims of a text are its sentences (`sentences`), and a claim is supported when each of its
words is a word of the contexts (`supported_by`)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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


class VaryingJudge:
    """A judge that does not answer a prompt the same way twice, as a sampled model may not:
    the n-th time (0-based) it is asked the same verdict prompt it scores varying_score(prompt,
    n), the reason naming the score. `given` keeps, by prompt (the user message), every score
    given, in the order given. Any other request is fake_llm's."""

    def __init__(self) -> None:
        self.given: dict[str, list[int]] = {}
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Answer:
        if schema_name_of(request) != "record_verdict":
            return fake_llm(request)
        prompt = str(request["messages"][-1]["content"])
        with self._lock:
            scores = self.given.setdefault(prompt, [])
            score = varying_score(prompt, len(scores))
            scores.append(score)
        reason = f"Answer {len(scores)} to this prompt: scored {score}."
        return 200, json.dumps({"reason": reason, "score": score})

    def scores_for(self, output: str) -> list[int]:
        """The scores given to the one prompt about `output` (the pair's output)."""
        found = [
            scores for prompt, scores in self.given.items() if f"<output>\n{output}\n" in prompt
        ]
        assert len(found) == 1, f"{len(found)} prompts judge the output {output!r}"
        return list(found[0])


def varying_score(prompt: str, n: int) -> int:
    """The score VaryingJudge gives the n-th time it is asked `prompt`: from a start the prompt
    picks, two steps on (mod 5) each time, so that three answers differ and their spread
    varies from prompt to prompt."""
    start = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).digest()[0]
    return 1 + (start + 2 * n) % 5


def mode_of(request: dict[str, Any]) -> str:
    """The structured-output mode a request was sent in."""
    if "response_format" in request:
        return str(request["response_format"].get("type"))
    return "tools" if "tools" in request else "prompt"


def requested_schema(request: dict[str, Any]) -> dict[str, Any]:
    """The schema a request asks its answer to match, in whatever mode it was sent."""
    mode = mode_of(request)
    if mode == "json_schema":
        return dict(request["response_format"]["json_schema"]["schema"])
    if mode == "json_object":
        return dict(request["response_format"].get("schema") or {})
    if mode == "tools":
        return dict(request["tools"][0]["function"]["parameters"])
    system = str(request["messages"][0]["content"])
    start = system.find("{", system.find("JSON schema:"))
    value, _ = json.JSONDecoder().raw_decode(system, start)
    return dict(value)


# The name the service gives each schema, by a property only that schema has.
_SCHEMA_NAMES = {
    "questions": "record_questions",
    "variants": "record_variants",
    "improved_prompt": "record_prompt",
    "score": "record_verdict",
    "winner": "record_preference",
    "claims": "record_claims",
    "verdicts": "record_support",
}


def schema_name_of(request: dict[str, Any]) -> str:
    """The name of the schema a request asks for (the modes that send no name: by its
    properties)."""
    mode = mode_of(request)
    if mode == "json_schema":
        return str(request["response_format"]["json_schema"]["name"])
    if mode == "tools":
        return str(request["tools"][0]["function"]["name"])
    properties = requested_schema(request).get("properties", {})
    return next((name for key, name in _SCHEMA_NAMES.items() if key in properties), "")


def recovered(text: str) -> str:
    """A block's text as the service wrote it before neutralising it (scoring.verdicts): one
    backslash fewer between "<" and "/"."""
    return re.sub(r"<(\\+)/", lambda match: "<" + match.group(1)[1:] + "/", text)


def sentences(text: str) -> list[str]:
    """The sentences of `text`: what ends with ".", "!" or "?" (or the text's end), stripped,
    at most 30."""
    found = [piece.strip() for piece in re.split(r"(?<=[.!?])\s+", text.strip())]
    return [piece for piece in found if piece][:30]


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def supported_by(claim: str, contexts: list[str]) -> bool:
    """Whether every word of the claim is a word of the contexts."""
    known: set[str] = set().union(*(words(context) for context in contexts))
    return words(claim) <= known


def block(user: str, tag: str) -> str | None:
    """The (recovered) text of the first <tag> block of a prompt; None when there is none."""
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.DOTALL)
    return recovered(found.group(1)) if found else None


def contexts_in(user: str) -> list[str]:
    """The (recovered) contexts a prompt shows, in rank order."""
    return [
        recovered(text)
        for text in re.findall(r'<context rank="\d+">\n(.*?)\n</context>', user, re.DOTALL)
    ]


def claims_in(user: str) -> list[tuple[int, str]]:
    """(index, recovered claim) of every claim a verification prompt lists."""
    listed = re.findall(r'<claim index="(\d+)">(.*?)</claim>', user, re.DOTALL)
    return [(int(index), recovered(claim)) for index, claim in listed]


def listing_claims(request: dict[str, Any]) -> Answer:
    """The claims of the prompt's text: its sentences."""
    text = block(request["messages"][-1]["content"], "text") or ""
    return 200, json.dumps({"claims": sentences(text)})


def checking_claims(request: dict[str, Any]) -> Answer:
    """Each claim supported when all its words are in the contexts, the verdicts in reverse
    order (each names its claim)."""
    user = request["messages"][-1]["content"]
    contexts = contexts_in(user)
    verdicts = [
        {"claim_index": index, "supported": supported_by(claim, contexts)}
        for index, claim in reversed(claims_in(user))
    ]
    return 200, json.dumps({"verdicts": verdicts})


def first_biased_preference(request: dict[str, Any]) -> Answer:
    """Prefers the output that says please when only one does; otherwise the one shown first
    (a judge with a position bias, which judging both orders cancels)."""
    user = request["messages"][-1]["content"]
    texts = [
        re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.DOTALL)
        for tag in ("first_output", "second_output")
    ]
    first, second = ("please" in (t.group(1).lower() if t else "") for t in texts)
    if first != second:
        winner = "first" if first else "second"
        return 200, json.dumps(
            {"reason": f"Only the {winner} output says please.", "winner": winner}
        )
    return 200, json.dumps({"reason": "Both are alike; the first reads better.", "winner": "first"})


def fake_llm(request: dict[str, Any]) -> Answer:
    """Answers every structured request the service makes, by the schema it names: verdicts
    (polite_judge), questions, variants, improved prompts, preferences
    (first_biased_preference), and the rag: metrics' claims (listing_claims, checking_claims)."""
    name = schema_name_of(request)
    if name == "record_preference":
        return first_biased_preference(request)
    if name == "record_claims":
        return listing_claims(request)
    if name == "record_support":
        return checking_claims(request)
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
    mode = mode_of(request)
    if mode in ("json_schema", "json_object"):
        sent.append(json.dumps(requested_schema(request)))
    if mode == "json_schema":
        sent.append(schema_name_of(request))
    if mode == "tools":  # the function's name twice (its tool and tool_choice), its description
        sent += [json.dumps(request["tools"]), schema_name_of(request)]
    prompt = sum(len(text.encode()) for text in sent) + 4 * len(request.get("messages", [])) + 3
    completion = min(int(request["max_tokens"]), len(content.encode()))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


# The dimensions of the fake's vectors.
EMBEDDING_DIMENSIONS = 64


def bag_of_words(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A deterministic vector of `text`: each word (lower-cased) adds ±1 at a place its hash
    picks, so texts sharing words are alike and texts sharing none are nearly orthogonal; a
    text without words is the zero vector."""
    vector = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode("utf-8", "surrogatepass")).digest()
        place = int.from_bytes(digest[:4], "big") % dimensions
        vector[place] += 1.0 if digest[4] & 1 else -1.0
    return vector


def embedding_tokens(texts: list[str]) -> int:
    """Tokens as a word-level tokenizer with start and end markers might count them."""
    return sum(len(re.findall(r"\w+|[^\w\s]", text)) + 2 for text in texts)


def embeddings_reply(vectors: list[list[float]], prompt_tokens: int | None = None) -> str:
    """The body of an OpenAI embeddings answer holding `vectors` (and `usage` when counted)."""
    reply: dict[str, Any] = {
        "object": "list",
        "model": "fake-embeddings",
        "data": [
            {"object": "embedding", "index": index, "embedding": vector}
            for index, vector in enumerate(vectors)
        ],
    }
    if prompt_tokens is not None:
        reply["usage"] = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}
    return json.dumps(reply)


def input_texts(request: dict[str, Any]) -> list[str]:
    """The texts an embeddings request carries (one string or a list of them)."""
    texts = request.get("input", [])
    return [texts] if isinstance(texts, str) else [str(text) for text in texts]


def hashed_embeddings(request: dict[str, Any]) -> Answer:
    """Every text's bag_of_words vector, with its tokens counted; a text no server takes (an
    empty one) is a 400, as OpenAI's is."""
    texts = input_texts(request)
    if any(not text for text in texts):
        return _error(400, "'$.input' is invalid: an input is empty")
    vectors = [
        bag_of_words(text, int(request.get("dimensions", EMBEDDING_DIMENSIONS))) for text in texts
    ]
    return 200, embeddings_reply(vectors, embedding_tokens(texts))


def refusing_long_texts(most_chars: int) -> Callable[[dict[str, Any]], Answer]:
    """hashed_embeddings, but a call carrying a text of more than `most_chars` characters is a
    400 saying it is too long (as a server with a small context says)."""

    def answer(request: dict[str, Any]) -> Answer:
        if any(len(text) > most_chars for text in input_texts(request)):
            return _error(400, "the input is too long for the context of this model")
        return hashed_embeddings(request)

    return answer


def failing_first(
    times: int, failure: Answer, then: Callable[[dict[str, Any]], Answer]
) -> Callable[[dict[str, Any]], Answer]:
    """`failure` for the first `times` requests, then `then`'s answers."""
    left = [times]
    lock = threading.Lock()

    def answer(request: dict[str, Any]) -> Answer:
        with lock:
            if left[0] > 0:
                left[0] -= 1
                return failure
        return then(request)

    return answer


def service_env(judge: FakeJudge) -> dict[str, str]:
    """The settings that point the service's LLM at `judge`."""
    return {
        "EVALSVC_LLM": "openai:fake-judge",
        "EVALSVC_OPENAI_BASE_URL": judge.base_url,
        "EVALSVC_OPENAI_API_KEY": "sk-test-not-a-real-key",
    }


def _error(status: int, message: str) -> Answer:
    return status, json.dumps({"error": {"message": message, "type": "invalid_request_error"}})


def _text(request: dict[str, Any], content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def _tool_call(request: dict[str, Any], content: str) -> dict[str, Any]:
    """A forced tool call's answer: the content as the function's arguments."""
    if "tools" not in request:
        return _text(request, content)
    name = request["tools"][0]["function"]["name"]
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": content}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _in_prose(request: dict[str, Any], content: str) -> dict[str, Any]:
    return _text(request, f"Sure! Here is my answer: {content} I hope this helps.")


@dataclass(frozen=True)
class Family:
    """How a family of servers takes structured output: what it refuses (None: it takes the
    request), and the message its answer comes back as."""

    name: str
    mode: str  # the first mode, in the service's order, that it takes
    refusal: Callable[[dict[str, Any]], Answer | None]
    message: Callable[[dict[str, Any], str], dict[str, Any]]


def _llama_cpp_python_refusal(request: dict[str, Any]) -> Answer | None:
    """llama-cpp-python's server: response_format is "text" or "json_object" (with a schema it
    enforces by grammar); anything else is a 500 whose body names the field."""
    kind = request.get("response_format", {}).get("type", "text")
    if kind in ("text", "json_object"):
        return None
    return 500, json.dumps(
        {
            "error": {
                "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', "
                "'type'), 'msg': \"Input should be 'text' or 'json_object'\"}]",
                "type": "internal_server_error",
            }
        }
    )


def _tools_only_refusal(request: dict[str, Any]) -> Answer | None:
    if "response_format" in request:
        return _error(400, "response_format is not supported")
    return None


def _plain_text_refusal(request: dict[str, Any]) -> Answer | None:
    if "response_format" in request:
        return _error(400, "Unrecognized request argument supplied: response_format")
    if "tools" in request or "tool_choice" in request:
        return _error(400, "Unrecognized request arguments supplied: tool_choice, tools")
    return None


FAMILIES = {
    # OpenAI, vLLM, llama.cpp's server: every mode, a forced tool as a tool call.
    "openai": Family("openai", "json_schema", lambda request: None, _tool_call),
    "llama-cpp-python": Family("llama-cpp-python", "json_object", _llama_cpp_python_refusal, _text),
    "tools-only": Family("tools-only", "tools", _tools_only_refusal, _tool_call),
    # Only plain text, its JSON inside a sentence.
    "plain-text": Family("plain-text", "prompt", _plain_text_refusal, _in_prose),
}


class FakeJudge:
    def __init__(
        self,
        answer: Callable[[dict[str, Any]], Answer] = fake_llm,
        latency: float = 0.0,
        family: str = "openai",
    ) -> None:
        self.answer = answer
        # The answers of `POST /v1/embeddings` (200: the whole body, embeddings_reply's).
        self.embeddings: Callable[[dict[str, Any]], Answer] = hashed_embeddings
        # Every embeddings request, in order (apart from `requests`, the judge's).
        self.embedding_requests: list[dict[str, Any]] = []
        self.latency = latency
        self.family = FAMILIES[family]
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

    def modes(self) -> list[str]:
        """The structured-output mode of every request received, in order."""
        with self._lock:
            return [mode_of(request) for request in self.requests]

    def verdicts_asked(self) -> list[tuple[str, str, str]]:
        """(question, input, output) of every verdict request received, in order."""
        asked = []
        for request in self.requests:
            if schema_name_of(request) != "record_verdict":
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
                if self.path.rstrip("/").endswith("/embeddings"):
                    self._embeddings(body)
                    return
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
                    answer = judge.family.refusal(body) or judge.answer(body)
                    status, content = answer[0], answer[1]
                    extra_headers: dict[str, str] = answer[2] if len(answer) > 2 else {}  # type: ignore[misc]
                finally:
                    with judge._lock:
                        judge.in_flight -= 1
                        judge.last_response_at = time.perf_counter()
                if status == 200:
                    message = judge.family.message(body, content)
                    reply: dict[str, Any] = {"choices": [{"index": 0, "message": message}]}
                    if judge.usage is not None:
                        reply["usage"] = judge.usage(body, content)
                        with judge._lock:
                            judge.reported.append(reply["usage"])
                    payload = json.dumps(reply).encode()
                else:
                    payload = content.encode()
                self._send(status, payload, extra_headers)

            def _embeddings(self, body: dict[str, Any]) -> None:
                with judge._lock:
                    judge.embedding_requests.append(body)
                    judge.authorizations.append(self.headers.get("Authorization"))
                    judge.in_flight += 1
                    judge.max_in_flight = max(judge.max_in_flight, judge.in_flight)
                try:
                    if judge.latency:
                        time.sleep(judge.latency)
                    answer = judge.embeddings(body)
                finally:
                    with judge._lock:
                        judge.in_flight -= 1
                extra_headers: dict[str, str] = answer[2] if len(answer) > 2 else {}  # type: ignore[misc]
                self._send(answer[0], answer[1].encode(), extra_headers)

            def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler

    @contextmanager
    def running(self) -> Iterator[FakeJudge]:
        self.server = _Server(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()


class _Server(ThreadingHTTPServer):
    """A threading server whose listen backlog holds every call the judge's pool sends at once
    (16, or more when configured): socketserver's default of 5 drops connections on a loaded
    machine, and each dropped one is an attempt the client counts and asks again."""

    request_queue_size = 128


def sequence(*answers: Answer) -> Callable[[dict[str, Any]], Answer]:
    """Answers in order, then the last one forever."""
    remaining = list(answers)
    lock = threading.Lock()

    def answer(_request: dict[str, Any]) -> Answer:
        with lock:
            return remaining.pop(0) if len(remaining) > 1 else remaining[0]

    return answer
