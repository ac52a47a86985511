"""Plan the trials, skip the finished ones, hand the rest to an executor, append each result as it comes back."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from bench.harness import results
from bench.harness.executors import Executor
from bench.harness.tasks import Task, families
from bench.harness.trial import STOP, BenchConfig, Job, failed_row, run_job
from ga.errors import ConfigError


def plan(tasks: list[Task], agents: dict[str, str], trials: int, config: BenchConfig, done: set[tuple]) -> list[Job]:
    """The jobs still to run, trial by trial (an interrupted run has every agent on the same footing); a family is
    one job per agent and trial, its unfinished rounds in order."""
    jobs = []
    chains = families(tasks)
    for trial in range(1, trials + 1):
        for task in tasks:
            if task.family:
                if task.round == min(t.round for t in chains[task.family]):
                    for agent, spec in agents.items():
                        todo = [t for t in chains[task.family] if (t.name, agent, trial) not in done]
                        if todo:
                            jobs.append(Job(agent=agent, spec=spec, trial=trial, tasks=[t.path for t in todo],
                                            config=config, family=task.family))
                continue
            jobs.extend(Job(agent=agent, spec=spec, trial=trial, tasks=[task.path], config=config)
                        for agent, spec in agents.items() if (task.name, agent, trial) not in done)
    return jobs


def check_out_folder(out: Path, config: BenchConfig) -> None:
    """One results folder, one model: refuse to mix another model's trials into it."""
    out.mkdir(parents=True, exist_ok=True)
    marker = out / "bench.json"
    mine = {"model": config.model, "scripted": config.scripted}
    if marker.is_file():
        theirs = json.loads(marker.read_text(encoding="utf-8"))
        if (theirs.get("model"), theirs.get("scripted")) != (mine["model"], mine["scripted"]):
            raise ConfigError(f"{out} holds trials of model {theirs.get('model')!r}"
                              f"{' (scripted)' if theirs.get('scripted') else ''}; this run uses {config.model!r}"
                              f"{' (scripted)' if config.scripted else ''}: choose another --out.")
    else:
        marker.write_text(json.dumps(mine), encoding="utf-8")


def _line(row: dict) -> str:
    mark = "[green]✓[/]" if row["success"] else "[yellow]![/] harness error:" if results.harness_error(row) else \
        "[red]✗[/]"
    note = f" · [yellow]{row['error'][:90]}[/]" if row.get("error") else ""
    tokens = row["input_tokens"] + row["output_tokens"]
    return (f"{mark} {row['agent']} · {row['task']} #{row['trial']} · {tokens:,} tok · {row['requests']} req · "
            f"{row['wall_s']:.1f} s{note}")


def run(tasks: list[Task], agents: dict[str, str], trials: int, config: BenchConfig, *, executor: Executor,
        console: Console | None = None) -> list[dict]:
    """Run what is not finished yet; returns every row of the folder (old and new). `agents` maps each agent's
    name to how to find it (see adapters.resolve)."""
    console = console or Console(stderr=True)
    path = config.out / "results.jsonl"
    rows = results.load(path)
    known = _finished(rows)
    _harvest(config.out, rows, known)  # finished just before an earlier harness died
    wanted = {(t.name, a, n) for t in tasks for a in agents for n in range(1, trials + 1)}
    jobs = plan(tasks, agents, trials, config, known)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False) as bar:
        progress = bar.add_task("trials", total=len(wanted), completed=len(wanted & known))
        if not jobs:
            console.print("every trial is already in results.jsonl: nothing to run")
        def record(new: list[dict]) -> None:
            for row in new:
                results.append(path, row)
                rows.append(row)
                bar.console.print(_line(row))
                bar.advance(progress)

        stop = config.out / STOP
        stop.unlink(missing_ok=True)
        futures = {executor.submit(run_job, job): job for job in jobs}
        suspects = []
        try:
            for future in executor.as_completed(futures):
                new, lost = _rows_of(future, futures[future], executor)
                if lost:  # a worker died: every job it took down runs again, alone, to find the one that kills it
                    suspects.append(futures[future])
                record([r for r in new if results.key(r) not in _finished(rows)])
            for job in suspects:
                new, lost = _rows_of(executor.submit(run_job, job), job, executor)
                record([failed_row(job, p, f"worker lost: {lost}", "") for p in job.tasks] if lost else new)
        except KeyboardInterrupt:
            stop.touch()  # the jobs workers already hold start nothing more
            executor.interrupt()
            raise
        finally:  # interrupted: the rounds of a family that finished are kept too
            _harvest(config.out, rows, _finished(rows))
    return rows


def _finished(rows: list[dict]) -> set[tuple]:
    """The trials that have their result: all but those the harness failed (a rerun runs them again)."""
    return {results.key(r) for r in rows if not results.harness_error(r)}


def _harvest(out: Path, rows: list[dict], known: set[tuple]) -> None:
    for row in results.harvest(out, known):
        if results.harness_error(row):
            continue  # already in results.jsonl, or run again: a harness failure is never a finished trial
        results.append(out / "results.jsonl", row)
        known.add(results.key(row))
        rows.append(row)


def _rows_of(future, job: Job, executor: Executor) -> tuple[list[dict], str]:
    """(the job's rows, ''), or ([], why) when its worker died; any other failure of the job is a failed row."""
    try:
        return future.result(), ""
    except Exception as e:
        if executor.lost(e):
            return [], f"{type(e).__name__}: {e}"
        return [failed_row(job, p, f"worker lost: {type(e).__name__}: {e}", "") for p in job.tasks], ""
