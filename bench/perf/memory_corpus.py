"""The labelled set of memory_bench.py: the SOPs and task phrasings of memory_retrieval.yaml, split in two halves
by a hash of each task's text (tune on dev, judge on heldout), and generated distractor SOPs that pad a library
to any size with plausible skills the labelled tasks never ask for."""

from __future__ import annotations

import itertools
import random
import zlib
from pathlib import Path

import yaml

from sop.skill import Skill

DATA = Path(__file__).with_name("memory_retrieval.yaml")

# Distractors: plausible SOPs about things the labelled tasks never ask for, sharing their generic words.
OBJECTS = [
    ("Kubernetes deployment", "kubectl", "the pods are Running and ready"),
    ("Terraform module", "terraform", "terraform plan shows no unexpected changes"),
    ("Redis cache", "redis-cli", "INFO shows the expected keys and memory"),
    ("nginx reverse proxy", "nginx -t", "curl through the proxy returns 200"),
    ("Ansible playbook", "ansible-playbook", "a second run reports no changes"),
    ("GraphQL schema", "graphql-inspector", "the introspection query still works"),
    ("React component", "npm test", "the component renders in the story"),
    ("Node.js package", "npm", "npm ls shows no missing peers"),
    ("Go module", "go build ./...", "go vet and go test pass"),
    ("Rust crate", "cargo", "cargo clippy is clean"),
    ("LaTeX document", "latexmk", "the PDF builds without undefined references"),
    ("Jupyter notebook", "jupyter nbconvert", "every cell runs top to bottom"),
    ("Elasticsearch index", "curl _cat/indices", "the document count matches"),
    ("Kafka topic", "kafka-topics.sh", "consumers read from the new offsets"),
    ("MongoDB collection", "mongosh", "the indexes are used by the queries"),
    ("AWS Lambda function", "aws lambda", "a test invocation returns the expected payload"),
    ("S3 bucket policy", "aws s3api", "the objects are reachable only as intended"),
    ("TLS certificate", "openssl", "the chain validates and the expiry is far off"),
    ("DNS record", "dig", "dig returns the new address from two resolvers"),
    ("Prometheus alert rule", "promtool", "the rule fires in a test"),
    ("Grafana dashboard", "grafana-cli", "the panels show data"),
    ("Helm chart", "helm", "helm lint passes and the release upgrades"),
    ("GitHub Actions workflow", "act", "the workflow runs green on a branch"),
    ("Maven build", "mvn", "mvn verify passes"),
    ("Android app build", "gradlew", "the APK installs on an emulator"),
    ("WordPress plugin", "wp-cli", "the plugin activates without warnings"),
    ("Stripe webhook handler", "stripe-cli", "stripe trigger delivers a test event"),
    ("Celery worker queue", "celery", "tasks are picked up and acknowledged"),
    ("OAuth client configuration", "curl", "the token exchange succeeds"),
    ("Vue single-page app", "vite", "the production build loads in the browser"),
    ("Spark job", "spark-submit", "the job finishes and writes its partitions"),
    ("Airflow DAG", "airflow", "the DAG parses and a test run succeeds"),
]
ACTIONS = [
    ("deploy", "Deploy", "roll it out to the target environment"),
    ("debug", "Debug", "find why it misbehaves"),
    ("upgrade", "Upgrade", "move it to the newest major version"),
    ("migrate", "Migrate", "move it to a new host or format"),
    ("monitor", "Monitor", "watch its health and get alerted"),
    ("benchmark", "Benchmark", "measure its speed under load"),
    ("lint", "Lint", "check it against style rules"),
    ("secure", "Harden", "close common security holes"),
    ("document", "Document", "describe how it works for newcomers"),
    ("roll-back", "Roll back", "return to the last good version"),
    ("profile", "Profile", "find where it spends its time"),
    ("scale", "Scale", "make it handle more traffic"),
]


def distractors(count: int, seed: int = 7) -> list[Skill]:
    combos = list(itertools.product(ACTIONS, OBJECTS))
    random.Random(seed).shuffle(combos)
    out = []
    for (slug, verb, goal), (obj, tool, check) in combos[:count]:
        name = f"{slug}-{obj.lower().replace('.', '').replace(' ', '-')}"
        body = (f"## When to use\nWhen asked to {verb.lower()} a {obj}: {goal}.\n## Steps\n"
                f"1. Find the {obj}'s configuration in the project and read it first.\n"
                f"2. {verb} it with {tool}; keep the command output for the report.\n"
                f"3. Verify: {check}.\n## Pitfalls\n- Change one thing at a time; note the previous state to undo it.")
        out.append(Skill(name=name, description=f"{verb} a {obj} ({goal}) with {tool}, checking that {check}.",
                         body=body, metadata={"status": "ok"}))
    return out


PARTS = ("dev", "heldout")


def part_of(text: str) -> str:
    """Which half a task belongs to: fixed by its text, so adding tasks never moves the others."""
    return PARTS[zlib.crc32(text.encode("utf-8")) % 2]


def labelled(part: str = "all") -> tuple[list[Skill], list[dict], list[str]]:
    """The library (always whole) and the labelled and unrelated tasks of `part` (dev, heldout or all)."""
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    skills = [Skill(name=s["name"], description=s["description"], body=s["body"],
                    metadata={"status": "ok", **({"keywords": s["keywords"]} if s.get("keywords") else {})})
              for s in data["sops"]]
    keep = (lambda text: True) if part == "all" else (lambda text: part_of(text) == part)
    return skills, [q for q in data["queries"] if keep(q["q"])], [u for u in data["unrelated"] if keep(u)]
