#!/usr/bin/env python3
"""Send sqs-jobs jobs from Python with boto3, using only the documented envelope.

No sqs-jobs code: each job is a CloudEvents 1.0 envelope (docs/contracts.md, "Producing from
another language"), checked against the shipped JSON Schema (envelope.schema.json, a copy of
the package's lib/core/envelope.schema.json) before anything is sent.

For each customer: the steps of one order (placed, paid, shipped) to the FIFO ``orders`` queue
with the customer id as partition key (MessageGroupId), and a receipt job to the standard
``emails`` queue. Prints what it sent as JSON on stdout.

    JOBS_QUEUE_URL_ORDERS=<url> JOBS_QUEUE_URL_EMAILS=<url> python send_jobs.py [--customers 3]

Region, credentials and AWS_ENDPOINT_URL come from the usual AWS environment. Exit code 0 when
every job was sent, 1 when some were not, 2 when an envelope or the usage is invalid (nothing sent).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

import boto3
from jsonschema import Draft202012Validator

SCHEMA_PATH = Path(__file__).with_name("envelope.schema.json")
QUEUE_URL_ENV_PREFIX = "JOBS_QUEUE_URL_"
ORDER_STEPS = ("placed", "paid", "shipped")
SQS_MAX_BATCH_ENTRIES = 10


class InvalidEnvelope(ValueError):
    """An envelope the workers would refuse: nothing is sent."""


def queue_urls_from_env(env: dict[str, str]) -> dict[str, str]:
    """JOBS_QUEUE_URL_<NAME> -> {name: url}; <NAME> lower-cased with '_' -> '-'."""
    return {
        key[len(QUEUE_URL_ENV_PREFIX):].lower().replace("_", "-"): value.strip()
        for key, value in env.items()
        if key.startswith(QUEUE_URL_ENV_PREFIX) and len(key) > len(QUEUE_URL_ENV_PREFIX) and value.strip()
    }


def now_rfc3339() -> str:
    """UTC time with milliseconds and 'Z', as the schema's `time` pattern wants."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def envelope(source: str, job_type: str, data: object, partition_key: str | None = None) -> dict:
    """A job envelope: CloudEvents 1.0, structured JSON mode, `data` = ids only."""
    event = {
        "specversion": "1.0",
        "id": str(uuid.uuid4()),
        "source": source,
        "type": job_type,
        "time": now_rfc3339(),
        "datacontenttype": "application/json",
        "data": data,
    }
    if partition_key is not None:
        event["partitionkey"] = partition_key
    return event


def deduplication_id(event: dict) -> str:
    """FIFO MessageDeduplicationId: SHA-256 hex of the compact JSON array [source, id, type, data] (as JobClient).

    A resend of the same job is dropped by SQS within 5 minutes; another job under a reused id is not.
    """
    text = json.dumps([event["source"], event["id"], event["type"], event["data"]],
                      separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check(validator: Draft202012Validator, event: dict) -> None:
    problems = sorted(validator.iter_errors(event), key=lambda e: list(e.absolute_path))
    if problems:
        lines = [f"  {'/'.join(map(str, p.absolute_path)) or '(envelope)'}: {p.message}" for p in problems]
        raise InvalidEnvelope(f"job {event.get('type')} (id {event.get('id')}) does not match the envelope schema:\n" + "\n".join(lines))


def send(sqs, queue_url: str, events: list[dict]) -> tuple[list[dict], list[dict]]:
    """SendMessageBatch in chunks of 10, in order; FIFO entries get MessageGroupId and a dedup id."""
    fifo = queue_url.endswith(".fifo")
    sent: list[dict] = []
    failed: list[dict] = []
    for start in range(0, len(events), SQS_MAX_BATCH_ENTRIES):
        chunk = events[start : start + SQS_MAX_BATCH_ENTRIES]
        entries = []
        for i, event in enumerate(chunk):
            # ASCII-only JSON text (non-ASCII as \uXXXX escapes): the same data for the worker, and no
            # character SQS refuses in a message body (e.g. U+FFFF) can appear raw.
            entry = {"Id": str(i), "MessageBody": json.dumps(event)}
            if fifo:
                entry["MessageGroupId"] = event["partitionkey"]
                entry["MessageDeduplicationId"] = deduplication_id(event)
            entries.append(entry)
        response = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
        for ok in response.get("Successful", []):
            event = chunk[int(ok["Id"])]
            sent.append({"id": event["id"], "type": event["type"], "messageId": ok["MessageId"], "data": event["data"],
                         "partitionKey": event.get("partitionkey"),
                         "deduplicationId": deduplication_id(event) if fifo else None})
        for bad in response.get("Failed", []):
            event = chunk[int(bad["Id"])]
            failed.append({"id": event["id"], "type": event["type"], "code": bad["Code"],
                           "message": bad.get("Message", ""), "senderFault": bad["SenderFault"]})
    return sent, failed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=int, default=3, help="customers (1-100), one order each (default 3)")
    parser.add_argument("--source", default="/services/shop-python", help="envelope source (default /services/shop-python)")
    args = parser.parse_args(argv)
    if not 1 <= args.customers <= 100:
        parser.error("--customers must be 1-100")

    urls = queue_urls_from_env(dict(os.environ))
    missing = [q for q in ("orders", "emails") if q not in urls]
    if missing:
        print(f"set {', '.join(QUEUE_URL_ENV_PREFIX + q.upper() for q in missing)} to the queue URL(s)", file=sys.stderr)
        return 2

    validator = Draft202012Validator(
        json.loads(SCHEMA_PATH.read_text(encoding="utf-8")), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    run = uuid.uuid4().hex[:8]
    by_queue: dict[str, list[dict]] = {"orders": [], "emails": []}
    for c in range(1, args.customers + 1):
        customer_id, order_id = f"customer-{run}-{c}", f"order-{run}-{c}"
        for step in ORDER_STEPS:
            by_queue["orders"].append(envelope(args.source, "orders.record-step", {"orderId": order_id, "step": step}, customer_id))
        by_queue["emails"].append(envelope(args.source, "emails.send-receipt", {"orderId": order_id}))
    try:
        for events in by_queue.values():
            for event in events:
                check(validator, event)
    except InvalidEnvelope as error:
        print(error, file=sys.stderr)
        return 2

    sqs = boto3.client("sqs")
    report = {"python": sys.version.split()[0], "source": args.source, "sent": [], "failed": []}
    for queue, events in by_queue.items():
        sent, failed = send(sqs, urls[queue], events)
        report["sent"] += [{**s, "queue": queue} for s in sent]
        report["failed"] += [{**f, "queue": queue} for f in failed]
    print(json.dumps(report, indent=2))
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
