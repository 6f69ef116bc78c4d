"""How many processes trained, decided from the strongest evidence a log gives (pure: no I/O): the banner's batch
arithmetic, then printed launcher and framework counts, the launch command, a model card, and last the words around
the log; every disagreement is said with both sources.
"""

from __future__ import annotations

import os

from trainsteps.derivation import format_value
from trainsteps.logs.inference import (
    Contradiction,
    Finding,
    Inference,
)
from trainsteps.logs.observed import Reading, RunObservation

# ---------------------------------------------------------------- processes

def decide_world_size(inf: Inference) -> None:
    run, d = inf.run, inf.derivation
    bs, ga, total = run.value("per_device_batch"), run.value("grad_accum"), run.value("total_batch")
    loader_bs = run.value("dataparallel_batch") or bs
    if bs and ga and total:
        if total % (loader_bs * ga) == 0:
            inf.world_size = d.add("world_size", total // (loader_bs * ga), "total batch / (bs x GA)",
                                   f"{total:,} / ({loader_bs} x {ga})", "explain.why.world")
        else:
            inf.contradictions.append(Contradiction(
                Finding("explain.contra.total_batch", {"total": total, "bs": loader_bs, "ga": ga}),
                [Finding("explain.expl.damaged")] + ([Finding("explain.expl.tp_counted")] if total > loader_bs * ga else [])))
    ds = {k: run.wrapper[k].value for k in ("deepspeed_train_batch_size", "deepspeed_micro_batch", "deepspeed_grad_accum") if k in run.wrapper}
    if len(ds) == 3 and ds["deepspeed_micro_batch"] * ds["deepspeed_grad_accum"]:
        ds_world = ds["deepspeed_train_batch_size"] / (ds["deepspeed_micro_batch"] * ds["deepspeed_grad_accum"])
        if inf.world_size is None and ds_world == int(ds_world):
            inf.world_size = d.add("world_size", int(ds_world), "train_batch_size / (micro x GA)",
                                   f"{ds['deepspeed_train_batch_size']} / ({ds['deepspeed_micro_batch']} x {ds['deepspeed_grad_accum']})",
                                   "explain.why.world_deepspeed")
        elif ds_world != inf.world_size:
            inf.facts.append(Finding("explain.fact.deepspeed_differs", {"ds": format_value(ds_world), "world": inf.world_size}))
    for key, source, why in (("framework_world", "explain.source.megatron", "explain.why.world_megatron"),
                             ("loop_world", "explain.source.loop_world", "explain.why.world_loop")):
        framework = run.wrapper.get(key)
        if inf.world_size is None and framework is not None and run.kind in ("progress", "wrapper"):
            inf.world_size = d.add("world_size", framework.value, source, "", why, **at(framework, run))
            return
    if inf.world_size is None and run.kind in ("progress", "wrapper", "trainer_state"):
        _source_world(inf)
        return
    if inf.world_size is None:
        return
    stated = run.wrapper.get("stated_gpus")
    if stated is not None and stated.value != inf.world_size and "launcher_world" not in run.wrapper:
        inf.facts.append(Finding("explain.fact.stated_gpus_differ", {"world": inf.world_size, "stated": stated.value,
                                                                    "where": where(stated, run)}))
    for key in ("unsloth_num_gpus", "launcher_world", "devices_hint"):
        hint = run.wrapper.get(key)
        if hint is None or hint.value == inf.world_size:
            continue
        if key == "devices_hint" and inf.world_size > hint.value and inf.world_size % hint.value == 0:
            # processes per node: the run spans world / per-node nodes
            inf.facts.append(Finding("explain.fact.nodes", {"world": inf.world_size, "per_node": hint.value,
                                                            "nodes": inf.world_size // hint.value, "line": hint.line}))
            break
        inf.facts.append(Finding("explain.fact.gpus_differ", {"world": inf.world_size, "expected": hint.value, "line": hint.line},
                                 code="LOG_PROCESSES_DIFFER"))
        break
    visible = run.wrapper.get("visible_devices")
    if visible is not None and visible.value != inf.world_size:
        inf.facts.append(Finding("explain.fact.visible_devices", {"world": inf.world_size, "visible": visible.value, "line": visible.line}))


def _launched(run: RunObservation) -> Reading | None:
    """The processes the launcher started: its own count, or `NNODES=2` times the GPUs per node stated elsewhere
    (`8 A100 each`) or visible on the node (CUDA_VISIBLE_DEVICES)."""
    launcher = run.wrapper.get("launcher_world") or run.wrapper.get("unsloth_num_gpus")
    nodes = run.wrapper.get("launcher_nodes")
    if launcher is not None or nodes is None:
        return launcher
    per_node = run.wrapper.get("stated_gpus_per_node") or run.wrapper.get("visible_devices")
    if per_node is None:
        return None
    return Reading(nodes.value * per_node.value, nodes.line, nodes.text, file=nodes.file, note="explain.note.nodes_times",
                   note_params={"nodes": nodes.value, "per_node": per_node.value})


def _card_world(inf: Inference) -> tuple[int, Reading] | None:
    """The processes a Trainer model card beside the log records: num_devices, else total / (batch x GA)."""
    run, d = inf.run, inf.derivation
    card = {k[5:]: r.value for k, r in run.wrapper.items() if k.startswith("card_")}
    bs, ga, total = card.get("train_batch_size"), card.get("gradient_accumulation_steps"), card.get("total_train_batch_size")
    if "num_devices" in card:
        reading = run.wrapper["card_num_devices"]
        return d.add("world_size", card["num_devices"], "explain.source.card", "", "explain.why.world_card", **at(reading, run)), reading
    if bs and ga and total and total % (bs * ga) == 0:
        reading = run.wrapper["card_total_train_batch_size"]
        return d.add("world_size", total // (bs * ga), "explain.source.card_total",
                     f"{total:,} / ({bs} x {ga})", "explain.why.world_card"), reading
    return None


def _source_world(inf: Inference) -> None:
    """No banner: the processes from the best source beside the log, strongest first: a Trainer model card (what the
    Trainer ran), an accelerate config, a launcher line, `GPU number` of an environment report or a launcher's
    processes per node (one node assumed), the GPUs the text states. Every other source that counts otherwise is
    reported, never silently overruled."""
    run, d = inf.run, inf.derivation
    card = _card_world(inf)
    launcher, configured = _launched(run), run.wrapper.get("configured_world")
    chosen: Reading | None = None
    if card is not None:
        inf.world_size, chosen = card
        name = "explain.source.model_card"
    elif configured is not None:
        inf.world_size = d.add("world_size", configured.value, "explain.source.accelerate", "", "explain.why.world_configured",
                               **at(configured, run))
        chosen, name = configured, "explain.source.accelerate"
        if launcher is not None and launcher.value < configured.value:
            # each node's launcher saw only its own processes: the nodes never joined one job (accelerate#1867)
            inf.facts.append(Finding("explain.fact.launcher_saw_fewer", {"configured": configured.value, "seen": launcher.value,
                                                                         "where": where(launcher, run)}, code="LOG_PROCESSES_DIFFER"))
            launcher = None
    elif launcher is not None:
        if launcher.note == "explain.note.nodes_times":
            inf.world_size = d.add("world_size", launcher.value, "explain.source.nodes_times",
                                   f"{launcher.note_params['nodes']} x {launcher.note_params['per_node']}", "explain.why.world_launcher")
        else:
            inf.world_size = d.add("world_size", launcher.value, "explain.source.launcher", "", "explain.why.world_launcher",
                                   **at(launcher, run))
        chosen, name = launcher, "explain.source.launcher"
    elif "devices_hint" in run.wrapper:
        chosen = run.wrapper["devices_hint"]
        inf.world_size = d.add("world_size", chosen.value, "explain.source.one_node", "", "explain.why.world_one_node", **at(chosen, run))
        name = "explain.source.one_node"
    elif "stated_gpus" in run.wrapper:
        chosen = run.wrapper["stated_gpus"]
        inf.world_size = d.add("world_size", chosen.value, "explain.source.stated", "", "explain.why.world_stated",
                               text=chosen.text[:80], **at(chosen, run))
        name = "explain.source.stated"
    if chosen is None:
        return
    others = (("explain.source.launcher", launcher), ("explain.source.stated", run.wrapper.get("stated_gpus")))
    for other, reading in others:
        if other == name or reading is None or reading.value == inf.world_size or reading is chosen:
            continue
        if other == "explain.source.stated" and launcher is not None and name != "explain.source.launcher" \
                and launcher.value == reading.value:
            continue  # the same count as the launcher's: one disagreement, said once
        inf.contradictions.append(Contradiction(
            Finding("explain.contra.sources_differ", {"other": other, "value": reading.value, "where": where(reading, run),
                                                     "chosen": name, "world": inf.world_size}),
            [Finding("explain.expl.sources_rank")]))
    _stated_among_themselves(inf)


def _stated_among_themselves(inf: Inference) -> None:
    """Two sentences of the words around a log that count the GPUs otherwise (`两台机器每台8张卡`, `gpu数量为8`)."""
    run = inf.run
    first, also = run.wrapper.get("stated_gpus"), run.wrapper.get("stated_gpus_also")
    if first is not None and also is not None and first.value != also.value:
        inf.facts.append(Finding("explain.fact.stated_counts_differ", {"first": first.value, "where": where(first, run),
                                                                      "other": also.value, "other_where": where(also, run)}))


def at(reading: Reading, run: RunObservation) -> dict:
    """Where a number was read, as parameters of its derivation step (rendered in the reader's language)."""
    other = run.elsewhere(reading)
    return {"at_line": reading.line, "at_file": os.path.basename(other)} if other else {"at_line": reading.line}


def where(reading: Reading, run: RunObservation) -> Finding:
    """`line 12`, or `README.md line 12` for a number read in another file than the run's, in the reader's language."""
    other = run.elsewhere(reading)
    if other:
        return Finding("explain.at_file_line", {"file": os.path.basename(other), "line": reading.line})
    return Finding("explain.at_line", {"line": reading.line})


def launcher_facts(inf: Inference) -> None:
    """DeepSpeed's batch assertion (what DeepSpeed saw against what was launched) and its pipeline CONFIG line."""
    run = inf.run
    keys = ("deepspeed_assert_train_batch", "deepspeed_assert_micro", "deepspeed_assert_ga", "deepspeed_assert_world")
    if all(k in run.wrapper for k in keys):
        tb, mb, ga, dp = (run.wrapper[k].value for k in keys)
        launched = run.wrapper.get("launcher_world")
        extra = {"launched": ""}
        if launched is not None and launched.value != dp:
            extra = {"launched": Finding("explain.fact.deepspeed_assert_launched", {"world": launched.value})}
        inf.facts.append(Finding("explain.fact.deepspeed_assert", {"tb": tb, "mb": mb, "ga": ga, "dp": dp, "product": mb * ga * dp, **extra},
                                 code="LOG_DEEPSPEED_BATCH"))
    if "pipeline_micro_batches" in run.wrapper and "pipeline_micro_batch_size" in run.wrapper:
        mb, size = run.wrapper["pipeline_micro_batches"], run.wrapper["pipeline_micro_batch_size"]
        inf.facts.append(Finding("explain.fact.pipeline", {"mb": mb.value, "size": size.value, "product": mb.value * size.value, "line": mb.line}))
