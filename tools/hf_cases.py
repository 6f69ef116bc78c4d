"""The recorded cases: inputs only (no expected values - those come from real runs).

Each case is a dict of inputs; omitted keys take the harness/Trainer defaults (see
tools/README.md).  Keys: num_examples, per_device_train_batch_size, gradient_accumulation_steps,
world_size, num_train_epochs, max_steps, dataloader_drop_last, split_batches, streaming,
resume_from_step, warmup_ratio, warmup_steps, logging_strategy, logging_steps, logging_first_step,
eval_strategy, eval_steps, save_strategy, save_steps.
"""
from __future__ import annotations


def _c(cid: str, n: int, bs: int, ga: int, **kw) -> dict:
    d = {"id": cid, "num_examples": n, "per_device_train_batch_size": bs, "gradient_accumulation_steps": ga}
    d.update(kw)
    return d


CASES: list[dict] = [
    # --- the headline configuration, W = 1..4 --------------------------------------------
    _c("n1047_b10_g8_e3", 1047, 10, 8, num_train_epochs=3),
    _c("n1047_b10_g8_e3_w2", 1047, 10, 8, num_train_epochs=3, world_size=2),
    _c("n1047_b10_g8_e3_w3", 1047, 10, 8, num_train_epochs=3, world_size=3),
    _c("n1047_b10_g8_e3_w4", 1047, 10, 8, num_train_epochs=3, world_size=4),
    _c("n1047_b10_g8_e300", 1047, 10, 8, num_train_epochs=300),
    _c("n1047_b10_g1_e1", 1047, 10, 1, num_train_epochs=1),
    # --- seed 003: 128,770 rows, batch 8, accumulation 8, 4 ranks (1,509 before 4.52, 1,512 from 4.52) -----------
    _c("n128770_b8_g8_e3_w4", 128770, 8, 8, num_train_epochs=3, world_size=4),
    # --- odd sizes, multi-rank ------------------------------------------------------------
    _c("n12877_b8_g8_e3_w4", 12877, 8, 8, num_train_epochs=3, world_size=4),
    _c("n12877_b8_g8_e3_w3", 12877, 8, 8, num_train_epochs=3, world_size=3),
    _c("n12877_b8_g8_e1_w2", 12877, 8, 8, num_train_epochs=1, world_size=2),
    _c("n12877_b8_g8_e1", 12877, 8, 8, num_train_epochs=1),
    _c("n1001_b4_g4_e2_w2", 1001, 4, 4, num_train_epochs=2, world_size=2),
    _c("n1001_b4_g4_e2_w4", 1001, 4, 4, num_train_epochs=2, world_size=4),
    _c("n30_b4_g2_e2_w3", 30, 4, 2, num_train_epochs=2, world_size=3),
    # --- N smaller than one global batch / loader shorter than GA --------------------------
    _c("n7_b8_g4_e3", 7, 8, 4, num_train_epochs=3),
    _c("n17_b8_g4_e3", 17, 8, 4, num_train_epochs=3),
    _c("n17_b8_g4_e3_w2", 17, 8, 4, num_train_epochs=3, world_size=2),
    _c("n20_b4_g8_e3", 20, 4, 8, num_train_epochs=3),
    _c("n40_b4_g16_e2.5", 40, 4, 16, num_train_epochs=2.5),
    # --- odd N ------------------------------------------------------------------------------
    _c("n1001_b7_g3_e2", 1001, 7, 3, num_train_epochs=2),
    _c("n1000_b7_g3_e2", 1000, 7, 3, num_train_epochs=2),
    _c("n1000_b7_g3_e2.5", 1000, 7, 3, num_train_epochs=2.5),
    _c("n100_b10_g3_e3", 100, 10, 3, num_train_epochs=3),
    # --- drop_last --------------------------------------------------------------------------
    _c("n1047_b10_g8_e3_droplast", 1047, 10, 8, num_train_epochs=3, dataloader_drop_last=True),
    _c("n1001_b4_g4_e2_droplast", 1001, 4, 4, num_train_epochs=2, dataloader_drop_last=True),
    _c("n1001_b4_g4_e2_w4_droplast", 1001, 4, 4, num_train_epochs=2, world_size=4, dataloader_drop_last=True),
    _c("n31_b4_g1_e1_w4_droplast", 31, 4, 1, num_train_epochs=1, world_size=4, dataloader_drop_last=True),
    _c("n5_b8_g1_e3_droplast", 5, 8, 1, num_train_epochs=3, dataloader_drop_last=True),
    _c("n5_b8_g1_ms10_droplast", 5, 8, 1, max_steps=10, dataloader_drop_last=True),
    # --- max_steps ----------------------------------------------------------------------------
    _c("n500_b4_g5_ms17", 500, 4, 5, max_steps=17),
    _c("n500_b4_g5_ms100", 500, 4, 5, max_steps=100),
    _c("n1047_b10_g8_ms27_w2", 1047, 10, 8, max_steps=27, world_size=2),
    _c("n1000_b7_g3_ms100_e2", 1000, 7, 3, max_steps=100, num_train_epochs=2),
    # --- fractional epochs ------------------------------------------------------------------
    _c("n1047_b10_g8_e2.5", 1047, 10, 8, num_train_epochs=2.5),
    _c("n1047_b10_g8_e0.3", 1047, 10, 8, num_train_epochs=0.3),
    # --- resume -----------------------------------------------------------------------------
    _c("n1047_b10_g8_e3_resume20", 1047, 10, 8, num_train_epochs=3, resume_from_step=20),
    _c("n1000_b7_g3_e2_resume30", 1000, 7, 3, num_train_epochs=2, resume_from_step=30),
    _c("n1047_b10_g8_e3_w2_resume10", 1047, 10, 8, num_train_epochs=3, world_size=2, resume_from_step=10),
    # --- warmup -------------------------------------------------------------------------------
    _c("n1047_b10_g8_e3_warmratio0.1", 1047, 10, 8, num_train_epochs=3, warmup_ratio=0.1),
    _c("n1047_b10_g8_e3_warmsteps5", 1047, 10, 8, num_train_epochs=3, warmup_steps=5),
    _c("n1047_b10_g8_e3_warmsteps0.1", 1047, 10, 8, num_train_epochs=3, warmup_steps=0.1),
    _c("n500_b4_g5_ms17_warmratio0.1", 500, 4, 5, max_steps=17, warmup_ratio=0.1),
    # --- save -----------------------------------------------------------------------------------
    _c("n1047_b10_g8_e3_save7", 1047, 10, 8, num_train_epochs=3, save_strategy="steps", save_steps=7),
    _c("n1047_b10_g8_e3_save20", 1047, 10, 8, num_train_epochs=3, save_strategy="steps", save_steps=20),
    _c("n1000_b7_g3_e2_save30", 1000, 7, 3, num_train_epochs=2, save_strategy="steps", save_steps=30),
    _c("n1047_b10_g8_e3_save0.25", 1047, 10, 8, num_train_epochs=3, save_strategy="steps", save_steps=0.25),
    _c("n1047_b10_g8_e3_saveepoch", 1047, 10, 8, num_train_epochs=3, save_strategy="epoch"),
    # --- eval -----------------------------------------------------------------------------------
    _c("n1047_b10_g8_ms50_eval7", 1047, 10, 8, max_steps=50, eval_strategy="steps", eval_steps=7),
    _c("n1047_b10_g8_ms50_eval0.13_save7", 1047, 10, 8, max_steps=50, eval_strategy="steps", eval_steps=0.13,
       save_strategy="steps", save_steps=7),
    _c("n1047_b10_g8_e3_evalepoch_saveepoch", 1047, 10, 8, num_train_epochs=3, eval_strategy="epoch",
       save_strategy="epoch"),
    _c("n1000_b7_g3_e2.5_evalepoch", 1000, 7, 3, num_train_epochs=2.5, eval_strategy="epoch"),
    # --- logging --------------------------------------------------------------------------------
    _c("n1047_b10_g8_ms50_log5", 1047, 10, 8, max_steps=50, logging_steps=5),
    _c("n1047_b10_g8_ms50_log0.1", 1047, 10, 8, max_steps=50, logging_steps=0.1),
    _c("n1047_b10_g8_e3_log7_first", 1047, 10, 8, num_train_epochs=3, logging_steps=7, logging_first_step=True),
    _c("n1047_b10_g8_e3_logepoch", 1047, 10, 8, num_train_epochs=3, logging_strategy="epoch"),
    # logging_first_step logs step 1 whatever logging_strategy is
    _c("n1047_b10_g8_e3_logepoch_first", 1047, 10, 8, num_train_epochs=3, logging_strategy="epoch", logging_first_step=True),
    _c("n1047_b10_g8_e3_logno_first", 1047, 10, 8, num_train_epochs=3, logging_strategy="no", logging_first_step=True),
    _c("n7_b8_g4_e3_logepoch_first", 7, 8, 4, num_train_epochs=3, logging_strategy="epoch", logging_first_step=True),
    # --- eval_delay: epoch evaluation compares it with state.epoch, steps evaluation with global_step ------------------
    _c("n1000_b7_g3_e3_evalepoch_delay1", 1000, 7, 3, num_train_epochs=3, eval_strategy="epoch", eval_delay=1),
    _c("n1047_b10_g8_e3_evalepoch_delay2", 1047, 10, 8, num_train_epochs=3, eval_strategy="epoch", eval_delay=2),
    _c("n1047_b10_g8_ms50_eval7_delay20", 1047, 10, 8, max_steps=50, eval_strategy="steps", eval_steps=7, eval_delay=20),
    # --- save_strategy="best": a checkpoint at each evaluation that improves metric_for_best_model ----------------------
    _c("n1047_b10_g8_ms50_eval7_savebest", 1047, 10, 8, max_steps=50, eval_strategy="steps", eval_steps=7,
       save_strategy="best", metric_for_best_model="loss"),
    _c("n1047_b10_g8_ms50_eval7_savebest_gib", 1047, 10, 8, max_steps=50, eval_strategy="steps", eval_steps=7,
       save_strategy="best", metric_for_best_model="loss", greater_is_better=True),
    _c("n1047_b10_g8_e3_evalepoch_savebest", 1047, 10, 8, num_train_epochs=3, eval_strategy="epoch",
       save_strategy="best", metric_for_best_model="loss"),
    _c("n1047_b10_g8_ms50_eval7_savebest_nometric", 1047, 10, 8, max_steps=50, eval_strategy="steps", eval_steps=7,
       save_strategy="best"),
    # --- resume with evaluation and save intervals ----------------------------------------------------------------------
    _c("n1047_b10_g8_e3_resume20_eval7_save10", 1047, 10, 8, num_train_epochs=3, resume_from_step=20,
       eval_strategy="steps", eval_steps=7, save_strategy="steps", save_steps=10),
    _c("n1000_b7_g3_e2_resume30_evalepoch_saveepoch", 1000, 7, 3, num_train_epochs=2, resume_from_step=30,
       eval_strategy="epoch", save_strategy="epoch"),
    # --- streaming (IterableDataset) -----------------------------------------------------------
    _c("stream_n300_b4_g2_ms20", 300, 4, 2, max_steps=20, streaming=True),
    _c("stream_n300_b4_g2_ms20_w2", 300, 4, 2, max_steps=20, streaming=True, world_size=2),
    _c("stream_n28_b4_g2_ms20", 28, 4, 2, max_steps=20, streaming=True),
    _c("stream_n28_b4_g2_ms20_w2", 28, 4, 2, max_steps=20, streaming=True, world_size=2),
    _c("stream_n300_b4_g2_nomaxsteps", 300, 4, 2, streaming=True),
    # --- split_batches ---------------------------------------------------------------------------
    _c("n1047_b10_g8_e3_w2_split", 1047, 10, 8, num_train_epochs=3, world_size=2, split_batches=True),
    _c("n1001_b4_g4_e2_w4_split", 1001, 4, 4, num_train_epochs=2, world_size=4, split_batches=True),
]

CASE_IDS = [c["id"] for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS), "duplicate case id"
