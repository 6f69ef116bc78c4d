"use strict";
// The trainsteps calculator page. Every number shown comes from the server, which runs the CLI's own commands:
// the text blocks are the CLI's text, the figures are formatted in Python the way the CLI formats them.

const T = {
  en: {
    tagline: "How long is this training run, really? What your framework prints and what its loop does, with where every number comes from.",
    language: "Language", copy_link: "Copy link", copied: "Link copied", copy: "Copy", copied_cli: "Command copied",
    tab_plan: "Plan", tab_config: "From a config", tab_explain: "Explain a log", tab_solve: "Solve", tab_pretrain: "Pretraining", tab_time: "Time",
    footer: "Runs on this machine; nothing leaves it. Same engine as the trainsteps command line.",
    g_framework: "Framework", g_data: "Data", g_batch: "Batch layout", g_length: "Length and release", g_events: "Warmup, logging, eval, save",
    g_lr: "Learning-rate schedule", g_more: "More settings", g_target: "Target (give one)", g_parallel: "Parallelism", g_eval: "Evaluation and saving",
    g_log: "The log", g_files: "Config files", g_overrides: "Settings typed on the command line (override the files)",
    wrapper: "trainer", wrapper_note: "{name} plans come from its config file: open \"From a config\" with an example to edit.",
    open_example: "Open an example", wrapper_note_pt: "{name} is planned from its own settings in the Pretraining tab.", framework_pt: "framework",
    log_placeholder: "Paste a training log here (banner, progress bars, trainer_state.json, launcher output)...",
    config_placeholder: "Paste a LLaMA-Factory / Axolotl / TRL / ms-swift YAML, TrainingArguments JSON or a DeepSpeed JSON here...",
    config_name: "file name", choose_log: "Choose a log file", choose_files: "Add files (dataset_info.json, data, accelerate config)",
    drop: "or drop files here", remove: "remove", run: "Compute", too_large: "This file is {size}; the page takes at most {limit}. Run: trainsteps explain FILE (any size, constant memory).",
    f_wall: "wall clock (expected, range)", f_gpu_hours: "GPU-hours", f_cost: "cost", g_rate: "Speed: a measured rate, or the FLOPs model",
    g_pauses: "Evaluations, saves, preparation, price", g_budget: "Time budget",
    f_steps: "optimizer steps", f_epochs: "epochs completed", f_samples: "samples seen (all ranks)", f_tokens: "tokens seen", f_iterations: "iterations",
    c_lr: "Learning rate and events over optimizer steps", c_events: "Events over optimizer steps", c_samples: "Samples fed over optimizer steps",
    c_tokens: "Tokens fed over optimizer steps", c_compare: "Every release family, same settings",
    l_lr: "learning rate (logged at step)", l_epoch: "epoch end", l_eval: "evaluation", l_save: "checkpoint", l_log: "loss logged", l_stop: "run stops",
    l_plan: "the plan's end", l_warmup: "end of warmup",
    stop_caption: "The run stops at step {steps} (epoch {done} of {planned}).",
    stop_caption_pt: "The run stops at iteration {steps}, having trained {done} of the {planned} epochs its data loader built.", plan_caption: " {planned} epochs would end at step {end}.",
    lr_caption: "{name} over {total} steps (num_training_steps = the plan's max_steps), warmup {warmup} steps.",
    cli_output: "What the command line prints", cli_line: "The same on the command line", family: "release family", release: "release", steps: "optimizer steps", epochs: "epochs",
    loading: "Computing...", failed: "The server did not answer: {detail}",
    too_large_config: "{name} is {size}: the page takes at most {limit} of files in all, so it was left out and the other files kept. With every file: trainsteps plan {config}",
    needs_files: "This link was made with {files}. Add them above (they are read in this browser, never uploaded) to plan the same run: without them the page would compute other numbers. Or press Compute to plan what is here.",
    tokens_cli: "Rows are counted in this browser. Tokens (tokens per step, packing) need the model's tokenizer, which the page does not carry; on the command line, where the files are:",
    cli_more: "... {n} more lines of the log (Copy copies the whole command)",
    log_reading: "Reading {name} in this browser: {read} of {size}...", log_read: "{name} ({size}) was read in this browser; nothing was uploaded.",
    x_gpus: "GPUs (processes)", x_release: "release", x_status: "status", x_rate: "time per optimizer step", x_left: "time left",
    x_wrong: "What went wrong", x_at_step: "step {where}", x_planned: "planned: {planned} steps", x_run: "Run {n}",
    st_finished: "finished", st_running: "running", st_crashed: "crashed", st_interrupted: "interrupted", st_unknown: "not known from the log",
    c_steps_time: "Steps over time: what the log shows, against where the run ends", l_logged: "steps the log shows",
    l_projected: "at the measured rate", l_end: "where the run really ends", l_planned: "the planned last step",
    engine_runtime: "Loading the Python engine into this page (about 21 MB on the first visit, cached after)...",
    engine_wheels: "Installing trainsteps into the page's Python...", engine_engine: "Starting trainsteps...",
    engine_ready: "The engine runs in this page (ready in {seconds} s): nothing you type or open leaves your browser.",
    engine_failed: "The engine could not start in this browser: {detail}. The same answers: pip install trainsteps, then trainsteps web",
  },
  zh: {
    tagline: "这次训练到底有多长？你的框架会打印什么、训练循环实际会做什么，以及每个数字的来历。",
    language: "语言", copy_link: "复制链接", copied: "链接已复制", copy: "复制", copied_cli: "命令已复制",
    tab_plan: "规划", tab_config: "从配置文件", tab_explain: "解释日志", tab_solve: "求解", tab_pretrain: "预训练", tab_time: "时间",
    footer: "在本机运行，数据不会离开本机。与 trainsteps 命令行使用同一引擎。",
    g_framework: "框架", g_data: "数据", g_batch: "批次布局", g_length: "训练长度与版本", g_events: "预热、日志、评估、保存",
    g_lr: "学习率调度", g_more: "更多设置", g_target: "目标（填一项）", g_parallel: "并行", g_eval: "评估与保存",
    g_log: "日志", g_files: "配置文件", g_overrides: "命令行上输入的设置（覆盖文件中的值）",
    wrapper: "训练器", wrapper_note: "{name} 的规划来自它的配置文件：打开“从配置文件”并载入示例后修改。",
    open_example: "打开示例", wrapper_note_pt: "{name} 在“预训练”标签页中按它自己的设置规划。", framework_pt: "框架",
    log_placeholder: "在此粘贴训练日志（横幅、进度条、trainer_state.json、启动器输出）……",
    config_placeholder: "在此粘贴 LLaMA-Factory / Axolotl / TRL / ms-swift 的 YAML、TrainingArguments JSON 或 DeepSpeed JSON……",
    config_name: "文件名", choose_log: "选择日志文件", choose_files: "添加文件（dataset_info.json、数据、accelerate 配置）",
    drop: "或把文件拖到这里", remove: "移除", run: "计算", too_large: "此文件大小为 {size}，网页最多接受 {limit}。请运行：trainsteps explain FILE（任意大小，固定内存）。",
    f_wall: "实际耗时（期望值与区间）", f_gpu_hours: "GPU 小时", f_cost: "费用", g_rate: "速度：实测速率，或 FLOPs 模型",
    g_pauses: "评估、保存、准备、价格", g_budget: "时间预算",
    f_steps: "优化步数", f_epochs: "完成轮数", f_samples: "已训练样本数（所有进程）", f_tokens: "已训练 token 数", f_iterations: "迭代数",
    c_lr: "学习率与事件（横轴为优化步）", c_events: "事件（横轴为优化步）", c_samples: "已训练样本数（横轴为优化步）",
    c_tokens: "已训练 token 数（横轴为优化步）", c_compare: "同样设置下的各版本族",
    l_lr: "学习率（该步记录的值）", l_epoch: "轮次结束", l_eval: "评估", l_save: "检查点", l_log: "记录损失", l_stop: "训练停止", l_plan: "计划的结束", l_warmup: "预热结束",
    stop_caption: "训练在第 {steps} 步停止（第 {done} 轮，共 {planned} 轮）。",
    stop_caption_pt: "训练在第 {steps} 次迭代停止，训练了数据加载器所构建的 {planned} 轮中的 {done} 轮。", plan_caption: "{planned} 轮将在第 {end} 步结束。",
    lr_caption: "{name}，共 {total} 步（num_training_steps = 计划的 max_steps），预热 {warmup} 步。",
    cli_output: "命令行的输出", cli_line: "在命令行上", family: "版本族", release: "版本", steps: "优化步数", epochs: "轮数",
    loading: "计算中……", failed: "服务器没有回应：{detail}",
    too_large_config: "{name} 大小为 {size}：网页最多接受共 {limit} 的文件，因此未载入它，其他文件已保留。使用全部文件：trainsteps plan {config}",
    needs_files: "此链接创建时使用了 {files}。请在上方添加这些文件（只在本浏览器中读取，不会上传）以规划同一次训练：没有它们，页面算出的将是另一组数字。也可以点击“计算”，按现有内容规划。",
    tokens_cli: "数据条数在本浏览器中统计。token 数（每步 token 数、打包）需要模型的分词器，本页面不带分词器；请在文件所在目录的命令行中运行：",
    cli_more: "……日志还有 {n} 行（“复制”会复制整条命令）",
    log_reading: "正在本浏览器中读取 {name}：{read} / {size}……", log_read: "已在本浏览器中读取 {name}（{size}），没有上传任何内容。",
    x_gpus: "GPU 数（进程数）", x_release: "版本", x_status: "状态", x_rate: "每个优化步耗时", x_left: "剩余时间",
    x_wrong: "出了什么问题", x_at_step: "第 {where} 步", x_planned: "计划：{planned} 步", x_run: "第 {n} 次运行",
    st_finished: "已完成", st_running: "运行中", st_crashed: "已崩溃", st_interrupted: "被中断", st_unknown: "日志中看不出",
    c_steps_time: "步数随时间变化：日志所示与训练真正结束处", l_logged: "日志中的步数",
    l_projected: "按实测速率推算", l_end: "训练真正结束的步", l_planned: "计划的最后一步",
    engine_runtime: "正在把 Python 引擎载入本页（首次约 21 MB，之后使用缓存）……",
    engine_wheels: "正在把 trainsteps 安装到本页的 Python 中……", engine_engine: "正在启动 trainsteps……",
    engine_ready: "引擎在本页中运行（{seconds} 秒就绪）：你输入或打开的内容都不会离开浏览器。",
    engine_failed: "引擎无法在此浏览器中启动：{detail}。同样的结果可通过 pip install trainsteps 后运行 trainsteps web 得到",
  },
};

// Field kinds: int, float, text, bool (sent when checked), boolT (true by default; sent as false when unchecked),
// select (first option = the CLI default, sent as nothing), release (text with the known releases as suggestions).
const F = (name, kind, extra = {}) => ({name, kind, ...extra});
const HF_FIELDS = [
  {group: "g_data", fields: [F("num_examples", "int"), F("streaming", "bool"), F("dataset_tokens", "int"), F("seq_length", "int")]},
  {group: "g_batch", fields: [F("per_device_train_batch_size", "int", {ph: "8"}), F("gradient_accumulation_steps", "int", {ph: "1"}),
    F("world_size", "int", {ph: "1"}), F("dataloader_drop_last", "bool")]},
  {group: "g_length", fields: [F("num_train_epochs", "float", {ph: "3"}), F("max_steps", "int", {ph: "-1"}), F("resume_from_step", "int"),
    F("transformers", "release")]},
  {group: "g_events", fold: true, fields: [F("warmup_ratio", "float"), F("warmup_steps", "float"), F("logging_steps", "float", {ph: "500"}),
    F("eval_strategy", "select", {options: ["", "no", "steps", "epoch"]}), F("eval_steps", "float"),
    F("save_strategy", "select", {options: ["", "steps", "epoch", "best", "no"]}), F("save_steps", "float", {ph: "500"})]},
  {group: "g_lr", fold: true, fields: [F("lr_scheduler_type", "scheduler"), F("learning_rate", "float", {ph: "5e-5"}),
    F("lr_scheduler_kwargs", "text", {ph: '{"min_lr_rate": 0.1}'})]},
  {group: "g_more", details: true, fields: [F("logging_strategy", "select", {options: ["", "steps", "epoch", "no"]}), F("logging_first_step", "bool"),
    F("eval_delay", "float", {ph: "0"}), F("split_batches", "bool"), F("even_batches", "boolT"), F("dispatch_batches", "select", {options: ["", "false"]}),
    F("tensor_parallel_size", "int", {ph: "1"}), F("context_parallel_size", "int", {ph: "1"}), F("sequence_parallel_size", "int", {ph: "1"}),
    F("trainable_parameters", "int")]},
];
const WRAPPERS = {hf: "Hugging Face Trainer", llamafactory: "LLaMA-Factory", trl: "TRL", "trl-grpo": "TRL GRPO", "trl-kto": "TRL KTO",
  unsloth: "Unsloth (TRL script)", axolotl: "Axolotl", swift: "ms-swift", verl: "verl (RL)", "verl-sft": "verl SFT", openrlhf: "OpenRLHF (RL)",
  easyr1: "EasyR1 (RL)", "trl-ppo": "TRL PPO (RL)"};
// picker entries that need a framework `plan` models (/api/meta rl_frameworks): the RL launch lines and TRL PPO
const NEEDS_RL = {verl: "verl", "verl-sft": "verl", openrlhf: "openrlhf", easyr1: "easyr1", "trl-ppo": "trl-ppo"};
// RL trainers are planned from their launch line (shown when this build models them: /api/meta rl_frameworks)
const RL = {
  verl: "python3 -m verl.trainer.main_ppo data.train_files=train.parquet data.train_batch_size=256 actor_rollout_ref.rollout.n=5 actor_rollout_ref.actor.ppo_mini_batch_size=64 trainer.n_gpus_per_node=8 trainer.nnodes=1 trainer.total_epochs=3",
  openrlhf: "deepspeed --module openrlhf.cli.train_ppo_ray --rollout_batch_size 1024 --n_samples_per_prompt 4 --train_batch_size 256 --micro_train_batch_size 4 --num_episodes 1",
  easyr1: "python3 -m verl.trainer.main config=examples/config.yaml data.rollout_batch_size=512 worker.rollout.n=5 trainer.total_epochs=15",
  "verl-sft": "torchrun --nnodes=1 --nproc_per_node=8 -m verl.trainer.sft_trainer data.train_files=train.parquet data.train_batch_size=256 trainer.total_epochs=4",
};
// Which planner takes which field comes from /api/meta `planners` (planners/table.py): a field is shown for the
// frameworks that take it, and an option a planner takes that no group below lists gets a field of its own, so a
// planner added to the table appears in the pickers with its fields and no page edit.
const PLANNER_NAMES = {hf: "Hugging Face Trainer", megatron: "Megatron-LM", neox: "GPT-NeoX", deepspeed: "DeepSpeed", lightning: "Lightning",
  torchtitan: "torchtitan", automodel: "NeMo Automodel", "llamafactory-v1": "LLaMA-Factory v1 (USE_V1=1)", verl: "verl (RL)",
  openrlhf: "OpenRLHF (RL)", easyr1: "EasyR1 (RL)", "trl-ppo": "TRL PPO (RL)", litgpt: "LitGPT", "megatron-bridge": "Megatron-Bridge",
  "swift-megatron": "ms-swift Megatron", slime: "slime (RL)", areal: "AReaL (RL)", "open-instruct": "open-instruct GRPO (RL)",
  "trl-async-grpo": "TRL AsyncGRPO (RL)", "prime-rl": "prime-rl (RL)", roll: "ROLL (RL)"};
const plannerName = (name) => PLANNER_NAMES[name] || name;
const PT_KINDS = ["pretrain", "stack"];  // the Pretraining tab plans these from flags
const PT_FIELDS = [
  {group: "g_framework", fields: [F("framework", "planner", {noDefault: true})]},
  {group: "g_data", fields: [F("train_tokens", "int"), F("seq_length", "int", {ph: "2048"}), F("split", "text", {ph: "969, 30, 1"}),
    F("num_examples", "int")]},
  {group: "g_batch", fields: [F("world_size", "int", {ph: "1"}), F("global_batch_size", "int"), F("train_batch_size", "int"), F("micro_batch_size", "int"),
    F("per_device_train_batch_size", "int", {ph: "8"}), F("gradient_accumulation_steps", "int", {ph: "1"}), F("dataloader_drop_last", "bool"),
    F("rampup_batch_size", "text", {ph: "32 32 1000000"}), F("decrease_batch_size_if_needed", "bool"), F("step_batch_size_schedule", "text", {ph: "0:768 250B:1536"})]},
  {group: "g_length", fields: [F("train_iters", "int"), F("train_samples", "int"), F("train_epochs", "int"), F("max_epochs", "int"),
    F("num_train_epochs", "float"), F("max_steps", "int", {ph: "-1"}), F("resume_from_step", "int"), F("limit_train_batches", "text", {ph: "1.0"}),
    F("megatron_version", "text", {ph: "0.19.0"}), F("megatron_code", "select", {options: ["", "core", "legacy"]}),
    F("neox_version", "select", {options: ["", "main", "2.0", "1.0"]}), F("framework_version", "text"), F("set", "lines", {ph: "training.steps=1000"})]},
  {group: "g_parallel", fields: [F("tensor_parallel_size", "int", {ph: "1"}), F("pipeline_parallel_size", "int", {ph: "1"}),
    F("context_parallel_size", "int", {ph: "1"}), F("expert_parallel_size", "int", {ph: "1"})]},
  {group: "g_eval", fields: [F("eval_interval", "int", {ph: "1000"}), F("eval_iters", "int", {ph: "100"}), F("eval_global_batch_size", "int"),
    F("save_interval", "int"), F("save_steps", "int"), F("lr_warmup_iters", "int", {ph: "0"}), F("warmup", "float", {ph: "0.01"}),
    F("warmup_steps", "int"), F("seed", "int", {ph: "1234"})]},
];
const SOLVE_FIELDS = [
  {group: "g_target", fields: [F("epochs", "float"), F("examples", "int"), F("tokens", "int"), F("max_steps", "int"), F("global_batch", "int"),
    F("max_per_device_batch", "int")]},
  {group: "g_data", fields: [F("num_examples", "int"), F("dataset_tokens", "int"), F("seq_length", "int"), F("streaming", "bool")]},
  {group: "g_batch", fields: [F("per_device_train_batch_size", "int", {ph: "8"}), F("gradient_accumulation_steps", "int", {ph: "1"}),
    F("world_size", "int", {ph: "1"}), F("dataloader_drop_last", "bool"), F("dispatch_batches", "select", {options: ["", "false"]}),
    F("transformers", "release")]},
];
const EXPLAIN_FIELDS = [
  {group: "g_more", fields: [F("framework", "select", {options: ["", "hf", "neox", "megatron", "deepspeed", "lightning"]}), F("raw_examples", "int"),
    F("seq_length", "int"), F("global_batch_size", "int")]},
];
const CONFIG_FIELDS = [
  {group: "g_overrides", fields: [F("launch", "lines", {ph: "torchrun --nproc_per_node 4 train.py"}), F("transformers", "release"),
    F("framework_version", "text"), F("framework", "framework"), F("set", "lines", {ph: "data.train_batch_size=256"}),
    F("num_examples", "int"), F("world_size", "int"), F("unsloth", "text", {ph: "2026.10.9"}),
    F("per_device_train_batch_size", "int"), F("gradient_accumulation_steps", "int"), F("num_train_epochs", "float"), F("max_steps", "int")]},
  {group: "g_lr", fields: [F("lr_scheduler_type", "scheduler"), F("learning_rate", "float"), F("lr_scheduler_kwargs", "text", {ph: '{"min_lr_rate": 0.1}'})]},
];
const RATE_FIELDS = [F("step_time", "text", {ph: "4s"}), F("tokens_per_second", "text", {ph: "3500/gpu"}), F("samples_per_second", "text"),
  F("params", "text", {ph: "7.6B"}), F("gpu", "gpu"), F("dtype", "select", {options: ["", "bf16", "fp16", "fp8", "tf32", "fp32"]}),
  F("mfu", "text", {ph: "0.3-0.5"}), F("training", "select", {options: ["", "full", "lora", "qlora", "frozen"]}),
  F("stack", "select", {options: ["", "megatron", "nemo", "fsdp", "torchtitan", "hf", "trainer", "deepspeed", "peft", "unsloth"]}),
  F("activation_checkpointing", "select", {options: ["", "none", "full", "selective"]}), F("peak_tflops", "float", {ph: "312"})];
const PAUSE_FIELDS = [F("eval_time", "text", {ph: "90s"}), F("save_time", "text", {ph: "30s"}), F("prepare_time", "text", {ph: "10m"}),
  F("price_per_gpu_hour", "float"), F("currency", "text", {ph: "USD"})];
PT_FIELDS.push({group: "g_rate", fold: true, fields: RATE_FIELDS}, {group: "g_pauses", fold: true, fields: PAUSE_FIELDS});
CONFIG_FIELDS.push({group: "g_rate", fold: true, fields: RATE_FIELDS}, {group: "g_pauses", fold: true, fields: [F("eval_examples", "int"), ...PAUSE_FIELDS]});
const TIME_FIELDS = [
  HF_FIELDS[0], HF_FIELDS[1], HF_FIELDS[2],
  {group: "g_rate", fields: RATE_FIELDS},
  {group: "g_pauses", fold: true, fields: [F("eval_strategy", "select", {options: ["", "no", "steps", "epoch"]}), F("eval_steps", "float"),
    F("eval_examples", "int"), F("eval_time", "text", {ph: "90s"}), F("save_steps", "float", {ph: "500"}), F("save_time", "text", {ph: "30s"}),
    F("prepare_time", "text", {ph: "10m"}), F("price_per_gpu_hour", "float"), F("currency", "text", {ph: "USD"})]},
];
SOLVE_FIELDS.push({group: "g_budget", fold: true, fields: [F("time_budget", "text", {ph: "12h"}), F("safety_margin", "float", {ph: "0.1"}),
  F("save_every", "text", {ph: "1h"}), ...RATE_FIELDS]});
const TABS = {
  plan: {api: "/api/plan", groups: HF_FIELDS, example: {num_examples: "1047", per_device_train_batch_size: "10", gradient_accumulation_steps: "8",
    num_train_epochs: "300", transformers: "4.49.0"}},
  config: {api: "/api/config", post: true, groups: CONFIG_FIELDS, byPlanner: true, example: {}},
  explain: {api: "/api/explain", post: true, groups: EXPLAIN_FIELDS, example: {}},
  solve: {api: "/api/solve", groups: SOLVE_FIELDS, example: {streaming: "true", num_examples: "1047", epochs: "3", per_device_train_batch_size: "10",
    gradient_accumulation_steps: "8"}},
  pretrain: {api: "/api/plan", groups: PT_FIELDS, byPlanner: true, example: {framework: "megatron", train_tokens: "32017905665", seq_length: "2048",
    global_batch_size: "1024", micro_batch_size: "4", world_size: "64", train_iters: "15000"}},
  time: {api: "/api/plan", groups: TIME_FIELDS, example: {num_examples: "1047", per_device_train_batch_size: "10", gradient_accumulation_steps: "8",
    num_train_epochs: "300", transformers: "4.49.0", step_time: "4s"}},
};
// Config templates for the wrapper picker (shapes of the repository's examples/; edit them to your run)
const TEMPLATES = {
  llamafactory: ["sft.yaml", "### LLaMA-Factory SFT: data sizes come from dataset_info.json + your data, or set num_examples below\nstage: sft\ndo_train: true\nfinetuning_type: lora\ndataset: my_data\ntemplate: llama3\ncutoff_len: 2048\nper_device_train_batch_size: 10\ngradient_accumulation_steps: 8\nnum_train_epochs: 300.0\nlr_scheduler_type: cosine\nwarmup_ratio: 0.1\nlogging_steps: 10\nsave_steps: 500\n"],
  trl: ["sft.yaml", "# TRL SFT (trl sft --config sft.yaml)\nmodel_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: my_data\nper_device_train_batch_size: 8\ngradient_accumulation_steps: 4\nnum_train_epochs: 3\nlearning_rate: 2.0e-5\nlr_scheduler_type: cosine\nwarmup_ratio: 0.03\nlogging_steps: 10\n"],
  axolotl: ["axolotl.yml", "base_model: Qwen/Qwen2.5-0.5B\ndatasets:\n  - path: data.jsonl\n    type: alpaca\nsequence_len: 2048\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\nnum_epochs: 3\nlearning_rate: 0.0002\nlr_scheduler: cosine\nwarmup_ratio: 0.1\n"],
  swift: ["sft.sh", "NPROC_PER_NODE=4 swift sft --model Qwen/Qwen2.5-7B-Instruct --dataset data.jsonl --per_device_train_batch_size 1 --num_train_epochs 3\n"],
  "trl-grpo": ["grpo.yaml", "# TRL GRPO (trl grpo --config grpo.yaml): num_examples below is the prompts\nmodel_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/tldr\nnum_generations: 8\nper_device_train_batch_size: 8\ngradient_accumulation_steps: 4\nnum_train_epochs: 1\nlogging_steps: 10\nsave_steps: 200\n"],
  "trl-kto": ["kto.yaml", "# TRL KTO: a paired chosen/rejected file is unpaired into 2 rows a pair; num_examples below is the rows after that\ndataset_name: pairs.jsonl\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 2\nnum_train_epochs: 1\ndesirable_weight: 1.0\nundesirable_weight: 1.0\n"],
  "trl-ppo": ["ppo.yaml", "# TRL PPOConfig (trl.experimental.ppo): num_examples below is the prompts\nper_device_train_batch_size: 16\ngradient_accumulation_steps: 4\nnum_mini_batches: 2\nnum_ppo_epochs: 4\nnum_train_epochs: 1\nresponse_length: 53\n"],
  unsloth: ["train.py", "# An Unsloth script: read with ast (never run); unsloth is imported before TRL's config class, so its defaults apply\nfrom unsloth import FastLanguageModel\nfrom trl import GRPOConfig, GRPOTrainer\n\nargs = GRPOConfig(\n    per_device_train_batch_size=1,\n    gradient_accumulation_steps=1,\n    num_generations=6,\n    max_steps=250,\n    save_steps=250,\n    output_dir=\"outputs\",\n)\n"],
};
// settings a template opens with (the rows are not in the template)
const TEMPLATE_VALUES = {"trl-grpo": {num_examples: "1000"}, "trl-kto": {num_examples: "2000"}, "trl-ppo": {framework: "trl-ppo", num_examples: "5000"},
  unsloth: {num_examples: "7473"}, "verl-sft": {framework: "verl", num_examples: "100000"}, verl: {num_examples: "7473"},
  openrlhf: {num_examples: "30000"}, easyr1: {num_examples: "7500"}};

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v); else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
};
const fmt = (s, params) => s.replace(/\{(\w+)\}/g, (_, k) => (params[k] ?? `{${k}}`));
const state = {tab: "plan", lang: "en", values: {}, text: "", configName: "config.yaml", files: [], linkFiles: [], meta: null, wrapper: "hf"};
const t = (k) => T[state.lang][k] ?? T.en[k] ?? k;
let requestId = 0, timer = null;

// ---- URL state ----------------------------------------------------------------------------------------------------
// URL parameters that are the page's state, not settings of the command
const PAGE_PARAMS = ["tab", "lang", "files"];
// the browser's first language decides on a first visit; a link carries `lang` only when it differs from it
const browserLang = () => (((navigator.languages && navigator.languages[0]) || navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en");
const loadedFiles = () => [...((state.configText || "").trim() ? [state.configName || "config.yaml"] : []), ...state.files.map((f) => f.name)];
function readURL() {
  const q = new URLSearchParams(location.search);
  state.tab = TABS[q.get("tab")] ? q.get("tab") : "plan";
  state.lang = ["en", "zh"].includes(q.get("lang")) ? q.get("lang") : browserLang();
  state.linkFiles = (q.get("files") || "").split(",").filter(Boolean);
  const values = {};
  for (const [k, v] of q) if (!PAGE_PARAMS.includes(k)) values[k] = v;
  const usable = Object.keys(values).length > 0;
  state.values = usable ? values : {...TABS[state.tab].example};
  state.fromExample = !usable;
}
function urlFor() {
  const q = new URLSearchParams();
  if (state.tab !== "plan") q.set("tab", state.tab);
  for (const [k, v] of Object.entries(state.values)) q.set(k, v);
  const files = state.tab === "config" ? loadedFiles() : [];
  if (files.length) q.set("files", files.join(","));  // a link cannot carry the files, but it says which ones it needs
  if (state.lang !== browserLang()) q.set("lang", state.lang);
  const s = q.toString();
  return location.pathname + (s ? "?" + s : "");
}
function writeURL(push) {
  const url = urlFor();
  if (url === location.pathname + location.search) return;
  if (push) history.pushState(null, "", url); else history.replaceState(null, "", url);
}

// ---- the form -----------------------------------------------------------------------------------------------------
function fieldInput(f) {
  const id = "f-" + f.name;
  if (f.kind === "bool" || f.kind === "boolT") return el("input", {id, name: f.name, type: "checkbox"});
  if (f.kind === "lines") return el("textarea", {id, name: f.name, placeholder: f.ph || "", spellcheck: "false", rows: "2"});
  if (f.kind === "select" || f.kind === "scheduler" || f.kind === "gpu" || f.kind === "framework" || f.kind === "planner") {
    const options = f.kind === "scheduler" ? ["", ...(state.meta?.schedulers || ["linear"])] : f.kind === "gpu" ? ["", ...(state.meta?.gpus || [])]
      : f.kind === "framework" ? ["", ...filePlanners().map((p) => p.name)] : f.kind === "planner" ? ptPlanners().map((p) => p.name) : f.options;
    const label = (o) => (o === "" ? "(default)" : f.kind === "planner" || f.kind === "framework" ? plannerName(o) : o);
    return el("select", {id, name: f.name}, options.map((o) => el("option", {value: o, text: label(o)})));
  }
  const attrs = {id, name: f.name, type: "text", placeholder: f.ph || "", spellcheck: "false"};
  if (f.kind === "int") attrs.inputmode = "numeric";
  if (f.kind === "float") attrs.inputmode = "decimal";
  if (f.kind === "release") { attrs.list = "releases"; attrs.placeholder = state.meta?.newest || ""; }
  return el("input", attrs);
}
const planners = () => state.meta?.planners || [];
const ptPlanners = () => planners().filter((p) => PT_KINDS.includes(p.kind));
// planners that read their own files in the config tab (the Trainer's configs are found without --framework)
const filePlanners = () => planners().filter((p) => p.files && p.kind !== "config" && p.kind !== "hf");
// the planners a tab can reach: the framework chosen, or in the config tab with none chosen, any that reads files
function reachable() {
  const fw = currentFramework();
  if (fw) return [fw];
  return state.tab === "config" ? ["config", ...filePlanners().map((p) => p.name)] : [];
}
// the planners that take a field (undefined when none does: a field of the page itself, always shown)
function takers(name) {
  const users = planners().filter((p) => name in p.fields).map((p) => p.name);
  return users.length ? users.join(" ") : undefined;
}
const shownFor = (fw) => fw === undefined || fw.split(" ").some((name) => reachable().includes(name));
// options a Pretraining-tab planner takes that no group lists: a field each, of the kind the CLI option has
function extraFields(groups) {
  const listed = new Set(groups.flatMap((g) => g.fields.map((f) => f.name)));
  const extra = new Map();
  for (const p of ptPlanners()) {
    for (const [name, kind] of Object.entries(p.fields)) {
      if (listed.has(name) || extra.has(name)) continue;
      extra.set(name, Array.isArray(kind) ? F(name, "select", {options: kind}) : F(name, ["bool", "lines", "int", "float"].includes(kind) ? kind : "text"));
    }
  }
  return extra.size ? [{group: "g_more", fold: true, fields: [...extra.values()]}] : [];
}
// a setting's name may wrap after an underscore, never inside a word (gradient_accumulation_steps, not ..._step / s)
const breakable = (name) => name.split("_").flatMap((part, i, parts) => (i < parts.length - 1 ? [part + "_", el("wbr")] : [part]));
function fieldRow(f) {
  const fw = TABS[state.tab].byPlanner && f.name !== "framework" ? takers(f.name) : undefined;
  const row = [el("label", {for: "f-" + f.name, "data-fw": fw}, breakable(f.name)), fieldInput(f)];
  row[1].dataset.kind = f.kind;
  if (fw) row[1].dataset.fw = fw;
  return row;
}
function buildForm() {
  const form = $("settings");
  form.replaceChildren();
  const tab = TABS[state.tab];
  if (state.tab === "plan") {
    form.append(el("h3", {text: t("g_framework")}), el("label", {for: "wrapper", text: t("wrapper")}),
      el("select", {id: "wrapper"}, Object.entries(wrappers()).map(([k, v]) => el("option", {value: k, text: v}))));
    form.append(el("p", {class: "note", id: "wrapper-note", hidden: true}));
  }
  if (state.tab === "explain") {
    form.append(el("h3", {text: t("g_log")}), el("label", {class: "visually-hidden", for: "log-text", text: t("g_log")}),
      el("textarea", {id: "log-text", class: "wide", placeholder: t("log_placeholder"), spellcheck: "false"}),
      el("label", {class: "wide", for: "log-file", text: t("choose_log")}), el("input", {id: "log-file", class: "wide", type: "file"}),
      el("p", {class: "note wide", id: "log-note", hidden: true}),
      el("div", {class: "drop", id: "drop", text: t("drop")}));
  }
  if (state.tab === "config") {
    form.append(el("h3", {text: t("g_files")}), el("label", {for: "config-name", text: t("config_name")}),
      el("input", {id: "config-name", type: "text", value: state.configName, spellcheck: "false"}),
      el("label", {class: "visually-hidden", for: "config-text", text: t("g_files")}),
      el("textarea", {id: "config-text", class: "wide", placeholder: t("config_placeholder"), spellcheck: "false"}),
      el("label", {class: "wide", for: "config-files", text: t("choose_files")}), el("input", {id: "config-files", class: "wide", type: "file", multiple: true}),
      el("div", {class: "drop", id: "drop", text: t("drop")}), el("div", {class: "files", id: "file-list"}), el("div", {class: "wide", id: "file-notes"}),
      el("div", {class: "wide", id: "tokens-box"}));
  }
  const groups = state.tab === "pretrain" ? [...tab.groups, ...extraFields(tab.groups)] : tab.groups;
  for (const g of groups) {
    const rows = g.fields.map(fieldRow).flat();
    const used = g.fields.some((f) => state.values[f.name] !== undefined);
    const names = g.fields.map((f) => f.name).join(" ");  // a group none of whose fields the framework takes is hidden
    if (g.details || (g.fold && !used)) form.append(el("details", {open: used, "data-group": names}, el("summary", {text: t(g.group)}), el("div", {}, rows)));
    else form.append(el("h3", {text: t(g.group), "data-group": names}), ...rows);
  }
  if (tab.post) form.append(el("span"), el("button", {type: "submit", class: "primary", id: "run", text: t("run")}));
  fillForm();
  wireForm();
}
function fillForm() {
  for (const input of $("settings").querySelectorAll("[name]")) {
    const v = state.values[input.name];
    if (input.type === "checkbox") input.checked = input.dataset.kind === "boolT" ? v !== "false" : ["true", "1", "on", "yes"].includes(String(v).toLowerCase());
    else input.value = v ?? "";
  }
  if (state.tab === "explain") $("log-text").value = state.text;
  if (state.tab === "config") { $("config-text").value = state.configText || ""; showFiles(); }
  showFrameworkFields();
}
function collect() {
  const values = {};
  for (const input of $("settings").querySelectorAll("[name]")) {
    if (!shownFor(input.dataset.fw)) continue;
    if (input.type === "checkbox") {
      if (input.dataset.kind === "boolT") { if (!input.checked) values[input.name] = "false"; } else if (input.checked) values[input.name] = "true";
    } else if (input.value.trim() !== "") values[input.name] = input.value.trim();
  }
  return values;
}
function currentFramework() { const s = $("f-framework"); return s ? s.value : ""; }
function showFrameworkFields() {
  for (const node of $("settings").querySelectorAll("[data-fw]")) node.hidden = !shownFor(node.dataset.fw);
  for (const group of $("settings").querySelectorAll("[data-group]")) {
    group.hidden = !group.dataset.group.split(" ").some((name) => { const input = $("f-" + name); return input && !input.hidden; });
  }
}
function wireForm() {
  const form = $("settings");
  form.addEventListener("input", (e) => {
    if (e.target.id === "f-framework") showFrameworkFields();
    if (e.target.id === "wrapper" || e.target.type === "file") return;
    if (e.target.id === "log-text") { state.text = e.target.value; state.textName = null; state.logFile = null; $("log-note").hidden = true; return; }
    if (e.target.id === "config-text") { state.configText = e.target.value; writeURL(false); return; }
    if (e.target.id === "config-name") { state.configName = e.target.value; writeURL(false); return; }
    state.values = collect();
    if (TABS[state.tab].post) { writeURL(false); return; }  // posted tabs compute on "Compute" (a log can be large)
    clearTimeout(timer);
    timer = setTimeout(() => { writeURL(true); compute(); }, 300);
  });
  form.addEventListener("submit", (e) => { e.preventDefault(); state.values = collect(); writeURL(true); compute(true); });
  const wrapper = $("wrapper");
  if (wrapper) wrapper.addEventListener("change", () => {
    const note = $("wrapper-note");
    note.replaceChildren();
    note.hidden = wrapper.value === "hf";
    if (wrapper.value === "hf") return;
    const pt = ptPlanners().some((p) => p.name === wrapper.value);
    note.append(fmt(t(pt ? "wrapper_note_pt" : "wrapper_note"), {name: wrappers()[wrapper.value]}) + " ",
      el("button", {type: "button", id: "open-example", text: t("open_example"), onclick: () => openTemplate(wrapper.value)}));
  });
  const file = $("log-file") || $("config-files");
  if (file) file.addEventListener("change", () => readFiles([...file.files]));
  const drop = $("drop");
  if (drop) {
    drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (e) => { e.preventDefault(); drop.classList.remove("over"); readFiles([...e.dataTransfer.files]); });
  }
}
// the Plan tab's trainer picker: the wrappers planned from their config files, and every planner of planners/table.py
function wrappers() {
  const rl = state.meta?.rl_frameworks || [];
  const listed = Object.fromEntries(Object.entries(WRAPPERS).filter(([k]) => !NEEDS_RL[k] || rl.includes(NEEDS_RL[k])));
  for (const p of planners()) if (!(p.name in listed) && p.kind !== "config") listed[p.name] = plannerName(p.name);
  return listed;
}
function openTemplate(name) {
  const planner = planners().find((p) => p.name === name);
  if (planner && PT_KINDS.includes(planner.kind)) {  // planned from flags in the Pretraining tab
    state.tab = "pretrain"; state.values = {framework: name}; state.linkFiles = [];
    writeURL(true); render(); return;
  }
  if (planner && planner.kind === "rl" && !RL[name] && !TEMPLATES[name]) {  // an RL trainer without a template: its launch line
    state.tab = "config"; state.values = {framework: name}; state.configText = ""; state.files = []; state.linkFiles = [];
    writeURL(true); render(); return;
  }
  if (RL[name]) {
    state.tab = "config"; state.values = {framework: NEEDS_RL[name] || name, launch: RL[name], ...(TEMPLATE_VALUES[name] || {})};
    state.configText = ""; state.files = []; state.linkFiles = [];
    writeURL(true); render(); return;
  }
  const [file, text] = TEMPLATES[name];
  state.tab = "config"; state.values = {...(TEMPLATE_VALUES[name] || {})}; state.configName = file; state.configText = text; state.files = []; state.linkFiles = [];
  writeURL(true); render();
}
const LOG_SLICE = 4 * 1024 * 1024;
// The static site: a log file goes to the engine in slices (File.slice), whatever its size, and explain reads it there
// as the CLI reads a file. The page never holds the whole text.
async function sendLog(file) {
  for (let offset = 0; offset < file.size || offset === 0; offset += LOG_SLICE) {
    const bytes = await file.slice(offset, offset + LOG_SLICE).arrayBuffer();
    await ENGINE.write(file.name, offset, bytes);
    if (file.size > LOG_SLICE) showLogNote(fmt(t("log_reading"), {name: file.name, read: mb(Math.min(file.size, offset + LOG_SLICE)), size: mb(file.size)}));
  }
  state.logFile = file.name; state.text = ""; state.textName = null;
  $("log-text").value = "";
  showLogNote(fmt(t("log_read"), {name: file.name, size: mb(file.size)}));
}
function showLogNote(text) {
  const note = $("log-note");
  if (note) { note.hidden = false; note.textContent = text; }
}
function readFiles(chosen) {
  let files = chosen;
  if (state.tab === "explain" && ENGINE && files.length === 1) {
    sendLog(files[0]).then(() => compute(), (err) => showError({error: String(err && err.message || err)}));
    return;
  }
  if (state.tab === "explain") {
    const limit = state.meta.limits.log_bytes;
    const large = files.find((f) => f.size > limit);
    if (large) { showError({error: fmt(t("too_large"), {size: mb(large.size), limit: mb(limit)})}); return; }
  } else files = withinConfigLimit(files);
  Promise.all(files.map((f) => f.text().then((text) => ({name: f.name, text})))).then((read) => {
    if (state.tab === "explain") {
      state.text = read.map((r) => r.text).join("\n"); state.textName = read.length === 1 ? read[0].name : null; state.logFile = null;
      $("log-text").value = state.text; compute(); return;
    }
    for (const r of read) {
      if (!$("config-text").value.trim() && /\.(ya?ml|json|sh|txt|py)$/i.test(r.name) && r.name !== "dataset_info.json") {
        state.configText = r.text; state.configName = r.name; $("config-text").value = r.text; $("config-name").value = r.name;
      } else state.files = [...state.files.filter((x) => x.name !== r.name), r];
    }
    showFiles(); writeURL(false); compute();
  });
}
const mb = (n) => (n / 1048576).toFixed(1) + " MB";
// the server takes config and data files up to a total size: the files that fit are kept, each one left out is named
// with the command that reads it
function withinConfigLimit(files) {
  const limit = state.meta.limits.config_bytes, bytes = (text) => new Blob([text]).size;
  const replaced = new Set(files.map((f) => f.name));
  let total = bytes(state.configText || "") + state.files.filter((f) => !replaced.has(f.name)).reduce((n, f) => n + bytes(f.text), 0);
  const kept = [], notes = [];
  for (const f of files) {
    if (total + f.size <= limit) { kept.push(f); total += f.size; continue; }
    const config = (state.configText || "").trim() ? state.configName : (files.find((x) => /\.(ya?ml|sh|py)$/i.test(x.name)) || {name: "CONFIG"}).name;
    notes.push(el("p", {class: "warn", "data-left-out": f.name}, fmt(t("too_large_config"), {name: f.name, size: mb(f.size), limit: mb(limit), config})));
  }
  $("file-notes").replaceChildren(...notes);
  return kept;
}
function showFiles() {
  const list = $("file-list");
  if (!list) return;
  list.replaceChildren(...state.files.map((f) => el("span", {}, f.name, el("button", {type: "button", "aria-label": t("remove") + " " + f.name, text: "×",
    onclick: () => { state.files = state.files.filter((x) => x !== f); showFiles(); writeURL(false); }}))));
  // Rows are counted where the page runs; tokens need a tokenizer, and none this page could carry is proven equal to
  // Hugging Face tokenizers (fast-bpe is tiktoken's Rust engine checked against tokenizers): the command that counts them.
  const data = state.files.some((f) => f.name !== "dataset_info.json" && !/\.(ya?ml)$/i.test(f.name));
  const command = `trainsteps plan ${state.configName || "CONFIG"} --tokenizer MODEL_DIR`;
  $("tokens-box").replaceChildren(...(data ? [el("p", {class: "note", id: "tokens-note", "data-command": command}, t("tokens_cli") + " ", el("code", {text: command}))] : []));
}

// ---- requests -----------------------------------------------------------------------------------------------------
async function call(tab) {
  const spec = TABS[tab];
  if (!spec.post) {
    // a plan brings its release families in the same answer (families=1): one change, one request
    const page = tab === "plan" ? {lang: state.lang, families: "1"} : {lang: state.lang};
    return ask(spec.api, {query: new URLSearchParams({...state.values, ...page}).toString()});
  }
  const settings = {...state.values, lang: state.lang};
  const body = tab === "explain" ? (state.logFile ? {log_file: state.logFile, settings} : {text: state.text, name: state.textName || undefined, settings})
    : {files: [{name: state.configName || "config.yaml", text: state.configText || ""}, ...state.files.map((f) => ({...f, role: /\.(ya?ml)$/i.test(f.name) && !/dataset_info/.test(f.name) ? undefined : "data"}))], settings};
  return ask(spec.api, {body: JSON.stringify(body)});
}
// ---- the engine: `trainsteps web` over HTTP, or (the static site) the same Python in a Web Worker -------------------
let engineShown = null;
function showEngine() {  // the worker's progress line, in the page's language (also redrawn when the language changes)
  if (!engineShown) return;
  const status = $("engine-status");
  status.dataset.stage = engineShown.stage;
  status.textContent = fmt(t("engine_" + engineShown.stage), engineShown.params);
}
const ENGINE = document.querySelector('meta[name="trainsteps-engine"]')?.content === "worker" ? startWorker() : null;
// [ok, answer] for a GET (query) or POST (body) of `path`: the server's JSON, whichever engine answers
async function ask(path, {query = "", body = null} = {}) {
  if (ENGINE) return ENGINE.ask(path, query, body);
  try {
    const res = await fetch(path + (query ? "?" + query : ""),
      body === null ? undefined : {method: "POST", headers: {"Content-Type": "application/json"}, body});
    return [res.ok, await res.json()];
  } catch (err) {
    return [false, {error: fmt(t("failed"), {detail: String(err)})}];
  }
}
function startWorker() {
  const worker = new Worker("worker.js", {type: "module"}), waiting = new Map();
  let next = 0;
  $("engine-status").hidden = false;
  window.__engine = {stage: "runtime"};
  const show = (stage, params = {}) => { engineShown = {stage, params}; showEngine(); };
  show("runtime");
  worker.onmessage = (e) => {
    const m = e.data;
    if (m.kind === "progress") {
      window.__engine = m;
      (window.__stages ||= []).push([m.stage, m.at]);
      if (m.stage === "ready") show("ready", {seconds: (m.ms / 1000).toFixed(1)});
      else if (m.stage === "failed") show("failed", {detail: m.detail});
      else show(m.stage);
      return;
    }
    const done = waiting.get(m.id);
    waiting.delete(m.id);
    if (done) done([m.status >= 200 && m.status < 300, JSON.parse(m.text)]);
  };
  worker.onerror = (e) => show("failed", {detail: e.message || "worker error"});
  return {write: (name, offset, bytes) => new Promise((done, failed) => {
    const id = ++next;
    waiting.set(id, ([ok, answer]) => (ok ? done() : failed(new Error(answer.error))));
    worker.postMessage({id, kind: "write", name, offset, bytes}, [bytes]);
  }), ask: (path, query, body) => new Promise((done) => {
    const id = ++next;
    waiting.set(id, done);
    worker.postMessage({id, method: body === null ? "GET" : "POST", path, query, body});
  })};
}
async function compute(asked = false) {
  const id = ++requestId, tab = state.tab, began = performance.now();
  const missing = tab === "config" ? state.linkFiles.filter((name) => !loadedFiles().includes(name)) : [];
  if (missing.length && !asked) {
    $("result").replaceChildren(el("p", {class: "warn", id: "needs-files", role: "status"}, fmt(t("needs_files"), {files: missing.join(", ")})));
    return;
  }
  const hasInput = tab === "explain" ? state.logFile || state.text.trim() : (state.configText || "").trim() || (state.values.launch || "").trim();
  if (TABS[tab].post && !hasInput) { $("result").replaceChildren(); return; }
  $("result").setAttribute("aria-busy", "true");
  const [ok, body] = await call(tab);
  if (id !== requestId) return;  // a newer request is on its way
  $("result").setAttribute("aria-busy", "false");
  if (!ok) return showError(body);
  renderResult(body);
  window.__computed.push({tab, ms: performance.now() - began});  // request to drawn result (bench/bench_site.py reads it)
}
window.__computed = [];

// ---- results ------------------------------------------------------------------------------------------------------
function showError(e) {
  $("result").replaceChildren(el("div", {class: "error", role: "alert", id: "error"}, el("strong", {text: e.error || "error"}),
    e.hint ? el("div", {text: e.hint}) : null));
}
function figure(key, value) {
  return el("div", {class: "figure", "data-figure": key}, el("div", {class: "k", text: t(key)}), el("div", {class: "v", text: value}));
}
function renderResult(body) {
  const out = [], charts = body.web.charts, families = body.web.families;  // a plan's release families (families=1)
  if (charts) charts.framework = body.framework;
  if (charts && charts.steps !== undefined) {
    const pretrain = body.framework !== "hf";
    const figs = [figure(pretrain && body.framework !== "lightning" ? "f_iterations" : "f_steps",
      pretrain ? charts.steps_text : `${charts.steps_text} / ${charts.max_steps_text}`)];
    if (!pretrain || body.framework === "lightning") figs.push(figure("f_epochs", charts.epochs_planned_text !== "?" && !body.run.rank_split
      ? `${charts.epochs_completed_text} / ${charts.epochs_planned_text}` : charts.epochs_completed_text));
    if (charts.progress) figs.push(figure(charts.progress.unit === "tokens" ? "f_tokens" : "f_samples", charts.progress.total_text));
    out.push(el("div", {class: "figures"}, figs));
  }
  if (body.web.time) {
    const tm = body.web.time;
    const figs = [el("div", {class: "figure", "data-figure": "f_wall"}, el("div", {class: "k", text: t("f_wall")}), el("div", {class: "v", text: tm.wall_text}),
      el("div", {class: "k", text: tm.wall_range_text}))];
    if (tm.gpu_hours_text) figs.push(figure("f_gpu_hours", tm.gpu_hours_text));
    if (tm.cost_text) figs.push(figure("f_cost", tm.cost_text));
    out.push(el("div", {class: "figures"}, figs));
  }
  for (const w of body.warnings || []) if (w && w.code) out.push(el("div", {class: "warn"}, el("code", {text: `[${w.code}]`}), " " + w.message));
  (body.web.explain || []).forEach((view, i, all) => out.push(...explainCards(view, all.length > 1 ? i + 1 : 0)));
  const main = [];
  if (charts && charts.steps !== undefined) main.push(eventsCard(charts), charts.progress ? progressCard(charts.progress) : null);
  if (families) main.push(compareCard(families, body.family && body.family.name));
  else if (charts && charts.families) main.push(compareCard(charts, null));
  const cards = main.filter(Boolean);
  if (cards.length) {
    const side = families ? cards.pop() : null;
    out.push(el("div", {class: "row2" + (side ? "" : " single")}, el("div", {}, cards), side));
  }
  out.push(cliCard(body.web));
  $("result").replaceChildren(...out);
  drawPending();
}
// ---- explain: a run's cards and its steps over time (numbers formatted in Python: web/charts.py explain_view) ----------
function explainCards(v, number) {
  const card = (key, value, detail) => el("div", {class: "figure", "data-figure": key}, el("div", {class: "k", text: t(key)}),
    el("div", {class: "v", text: value ?? "—"}), detail ? el("div", {class: "k", text: detail}) : null);
  const where = v.at_text ? (v.end_text && v.end_text !== v.at_text ? `${v.at_text} / ${v.end_text}` : v.at_text) : null;
  const figs = [card("x_gpus", v.gpus_text), card("x_release", v.release_text, v.release_detail),
    card("x_status", t("st_" + v.status) + (where ? " · " + fmt(t("x_at_step"), {where}) : ""), v.planned_text && v.planned_text !== v.end_text ? fmt(t("x_planned"), {planned: v.planned_text}) : null),
    card("x_rate", v.rate_text, v.rate_range_text), card("x_left", v.left_text, v.left_text ? v.left_range_text : v.left_detail)];
  const out = [];
  if (number) out.push(el("h2", {class: "run-title", text: fmt(t("x_run"), {n: String(number)})}));
  out.push(el("div", {class: "figures explain-cards"}, figs));
  if (v.wrong.length) out.push(el("div", {class: "warn", id: "explain-wrong"}, el("strong", {text: t("x_wrong")}), el("ul", {}, v.wrong.map((w) => el("li", {text: w})))));
  if (v.plot) out.push(stepsOverTimeCard(v.plot));
  return out;
}
function stepsOverTimeCard(p) {
  const box = el("div", {class: "chart", id: "chart-steps-time", role: "img", "aria-label": t("c_steps_time")});
  const legend = el("div", {class: "legend"}, [["l_logged", "--accent", true], ["l_projected", "--plan", !!p.projection], ["l_end", "--stop", !!p.end_step],
    ["l_planned", "--epoch", p.planned_end_step && p.planned_end_step !== p.end_step]].filter((x) => x[2])
    .map(([k, v]) => { const i = el("i"); i.style.background = css(v); return el("span", {}, i, t(k)); }));
  pending.push(() => drawStepsOverTime(box, p));
  return el("div", {class: "card"}, el("h2", {text: t("c_steps_time")}), box, legend);
}
function drawStepsOverTime(box, p) {
  // one x axis (hours) for the logged points and the projection: the union of their x values, gaps where a series has none
  const xs = [...new Set([...p.points.map((q) => q[0]), ...(p.projection || []).map((q) => q[0])])].sort((a, b) => a - b);
  const at = (series) => { const m = new Map(series.map((q) => [q[0], q[1]])); return xs.map((x) => (m.has(x) ? m.get(x) : null)); };
  const top = Math.max(p.end_step || 0, p.planned_end_step || 0, ...p.points.map((q) => q[1]));
  const opts = baseOpts(box, 220);
  opts.scales = {x: {time: false}, y: {range: [0, top * 1.05 || 1]}};
  opts.series = [{}, {label: t("l_logged"), stroke: css("--accent"), width: 2, spanGaps: true, points: {show: p.points.length < 40}},
    {label: t("l_projected"), stroke: css("--plan"), width: 2, dash: [6, 4], spanGaps: true, points: {show: false}}];
  opts.axes[0].values = (u, vals) => vals.map((h) => (h == null ? "" : +h.toPrecision(3) + " h"));
  opts.hooks = {draw: [(u) => {
    const ctx = u.ctx, dpr = devicePixelRatio || 1;
    const hline = (step, color, dash) => {
      const y = Math.round(u.valToPos(step, "y", true));
      ctx.save(); ctx.strokeStyle = color; ctx.lineWidth = 1.5 * dpr; ctx.setLineDash(dash.map((d) => d * dpr));
      ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke(); ctx.restore();
    };
    if (p.end_step) hline(p.end_step, css("--stop"), []);
    if (p.planned_end_step && p.planned_end_step !== p.end_step) hline(p.planned_end_step, css("--epoch"), [2, 3]);
  }]};
  box.replaceChildren();
  const u = new uPlot(opts, [xs, at(p.points), at(p.projection || [])], box);
  window.__charts.stepsOverTime = {u, points: p.points.length};
  observe(box, u);
}
// The CLI pads a table's labels to their width in terminal columns (a Chinese character takes two). A browser's
// fallback font draws CJK at its own width, so a label with wide characters is put in a box of exactly that many
// columns (ch): the values line up as in a terminal, and the text stays the CLI's, character for character.
const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6]/g;
function alignedRow(line) {
  const m = line.match(/^(\s+\S.*?\s{2,})(?=\S)/);
  if (!m || !WIDE.test(m[1])) return line;
  WIDE.lastIndex = 0;
  const columns = m[1].length + (m[1].match(WIDE) || []).length;
  const cell = el("span", {class: "cell"}, m[1]);
  cell.style.width = columns + "ch";
  return el("span", {}, cell, line.slice(m[1].length));
}
function cliCard(web) {
  const pre = el("pre", {id: "cli-text"});
  for (const line of web.text.split("\n")) {
    pre.append(/^\S/.test(line) ? el("strong", {text: line}) : alignedRow(line), "\n");
  }
  if (pre.lastChild) pre.lastChild.remove();  // no newline after the last line: textContent equals the CLI's text
  const copy = el("button", {type: "button", id: "copy-cli", text: t("copy"), onclick: () => copyText(web.cli, t("copied_cli"))});
  const lines = web.cli.split("\n");
  const shown = lines.length > 12 ? [...lines.slice(0, 6), fmt(t("cli_more"), {n: (lines.length - 7).toLocaleString("en-US")}), lines[lines.length - 1]].join("\n") : web.cli;
  return el("div", {class: "card"}, el("h2", {text: t("cli_line")}), el("div", {class: "cli"}, el("pre", {id: "cli-line", "data-full": web.cli, text: shown}), copy),
    el("h2", {text: t("cli_output")}), pre);
}
function compareCard(c, current) {
  const max = Math.max(1, ...c.families.map((f) => f.steps || 0));
  const rows = c.families.map((f) => el("div", {class: "bar" + (f.family === current ? " current" : ""), "data-family": f.family},
    el("span", {text: f.family}), el("div", {class: "track", role: "img", "aria-label": `${f.family}: ${f.steps_text} ${t("steps")}, ${f.epochs_text} ${t("epochs")}`},
      barFill(f.steps ? f.steps / max : 0)), el("span", {class: "num", text: `${f.steps_text} · ${f.epochs_text} ${t("epochs")}`})));
  const table = el("table", {class: "compare"}, el("tr", {}, [t("family"), t("release"), t("steps"), t("epochs")].map((h) => el("th", {text: h}))),
    c.families.map((f) => el("tr", {}, [f.family, f.version, f.steps_text, f.epochs_text].map((v) => el("td", {text: v})))));
  const errors = c.families.filter((f) => f.error).map((f) => el("p", {class: "caption"}, el("strong", {text: f.family + ": "}), f.error));
  return el("div", {class: "card", id: "compare"}, el("h2", {text: t("c_compare")}), el("div", {class: "bars"}, rows), table, errors);
}
function barFill(share) {
  const fill = el("div", {class: "fill"});
  fill.style.width = (share * 100).toFixed(1) + "%";
  return fill;
}
function copyText(text, done) {
  const ok = () => toast(done);
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(ok, () => fallbackCopy(text, ok));
  else fallbackCopy(text, ok);
}
function fallbackCopy(text, ok) {
  const area = el("textarea", {"aria-hidden": "true"});
  area.value = text; document.body.append(area); area.select();
  try { document.execCommand("copy"); ok(); } finally { area.remove(); }
}
function toast(text) {
  const node = el("div", {class: "toast", role: "status", text});
  document.body.append(node);
  setTimeout(() => node.remove(), 1600);
}

// ---- charts (uPlot) -----------------------------------------------------------------------------------------------
const pending = [];
const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
window.__charts = {};
function eventsCard(c) {
  const lr = c.lr && c.lr.points.length ? c.lr : null;
  const box = el("div", {class: "chart", id: "chart-events", "data-epoch-ends": c.epoch_end_steps.join(","), "data-stop": c.steps,
    role: "img", "aria-label": t(lr ? "c_lr" : "c_events") + ". " + stopCaption(c)});
  const legend = el("div", {class: "legend"}, [["l_lr", "--lr", !!lr], ["l_epoch", "--epoch", c.epoch_end_steps.length], ["l_log", "--log", c.log_steps.length],
    ["l_eval", "--eval", c.eval_steps.length], ["l_save", "--save", c.save_steps.length], ["l_stop", "--stop", true],
    ["l_plan", "--plan", c.planned_end_step || c.max_steps !== c.steps]].filter((x) => x[2])
    .map(([k, v]) => { const i = el("i"); i.style.background = css(v); return el("span", {}, i, t(k)); }));
  const caption = [stopCaption(c)];
  if (lr) caption.push(fmt(t("lr_caption"), {name: lr.scheduler, total: c.max_steps_text, warmup: String(lr.warmup_steps)}));
  if (c.lr && c.lr.problem) caption.push(c.lr.problem);
  pending.push(() => drawEvents(box, c, lr));
  return el("div", {class: "card"}, el("h2", {text: t(lr ? "c_lr" : "c_events")}), box, legend, el("p", {class: "caption", id: "stop-caption", text: caption.join(" ")}));
}
function stopCaption(c) {
  let s = fmt(t(c.framework === "hf" || c.framework === "lightning" ? "stop_caption" : "stop_caption_pt"),
              {steps: c.steps_text, done: c.epochs_completed_text, planned: c.epochs_planned_text});
  if (c.planned_end_step) s += fmt(t("plan_caption"), {planned: c.epochs_planned_text, end: c.planned_end_text});
  return s;
}
function progressCard(p) {
  const box = el("div", {class: "chart", id: "chart-progress", role: "img", "aria-label": t(p.unit === "tokens" ? "c_tokens" : "c_samples") + ": " + p.total_text});
  pending.push(() => drawProgress(box, p));
  return el("div", {class: "card"}, el("h2", {text: t(p.unit === "tokens" ? "c_tokens" : "c_samples")}), box);
}
function drawPending() { while (pending.length) pending.shift()(); }
const compact = new Intl.NumberFormat("en-US", {notation: "compact", maximumSignificantDigits: 4});
// axis ticks only (the figures and texts carry the exact numbers): 1,000 below a million, 31.46B above
const groupFmt = (v) => (v == null ? "" : Math.abs(v) >= 1e6 ? compact.format(v) : Number.isInteger(v) ? v.toLocaleString("en-US") : String(+v.toPrecision(4)));
function baseOpts(box, height) {
  return {width: Math.max(240, box.clientWidth), height, legend: {show: false}, cursor: {y: false},
    axes: [{stroke: css("--muted"), grid: {stroke: css("--line")}, ticks: {stroke: css("--line")}, values: (u, vals) => vals.map(groupFmt)},
           {stroke: css("--muted"), grid: {stroke: css("--line")}, ticks: {stroke: css("--line")}, size: 64, values: (u, vals) => vals.map(groupFmt)}]};
}
function drawEvents(box, c, lr) {
  const end = Math.max(c.steps, c.max_steps, c.planned_end_step || 0, 1);
  const xs = lr ? lr.points.map((p) => p[0]) : [0, end];
  const ys = lr ? lr.points.map((p) => p[1]) : [null, null];
  const drawn = {epochs: [], stop: null};
  const opts = baseOpts(box, lr ? 260 : 110);
  opts.scales = {x: {time: false, range: [0, end]}, y: lr ? {} : {range: [0, 1]}};
  opts.series = [{}, {label: t("l_lr"), stroke: css("--lr"), width: 2, points: {show: false}}];
  if (!lr) opts.axes[1].show = false;
  opts.hooks = {draw: [(u) => {
    const ctx = u.ctx, top = u.bbox.top, bottom = u.bbox.top + u.bbox.height;
    const vline = (step, color, width, dash, from = top, to = bottom) => {
      const x = Math.round(u.valToPos(step, "x", true));
      ctx.save(); ctx.strokeStyle = color; ctx.lineWidth = width; ctx.setLineDash(dash);
      ctx.beginPath(); ctx.moveTo(x, from); ctx.lineTo(x, to); ctx.stroke(); ctx.restore();
      return x;
    };
    const dpr = devicePixelRatio || 1;
    const spacing = c.epoch_end_steps.length > 1 ? u.bbox.width / c.epoch_end_steps.length : Infinity;
    const dense = spacing < 10 * dpr;  // many epochs: a tick along the top edge per epoch end instead of a full line
    drawn.epochs = c.epoch_end_steps.map((s) => ({step: s, px: dense ? vline(s, css("--epoch"), 1 * dpr, [], top, top + 8 * dpr)
      : vline(s, css("--epoch"), 1 * dpr, [2 * dpr, 3 * dpr])}));
    drawn.dense = dense;
    const rows = [["log_steps", "--log"], ["eval_steps", "--eval"], ["save_steps", "--save"]];
    rows.forEach(([key, color], i) => {
      const y0 = bottom - (i + 1) * 7 * dpr;
      for (const s of c[key]) vline(s, css(color), 1.5 * dpr, [], y0, y0 + 6 * dpr);
    });
    if (c.warmup_steps) vline(c.warmup_steps, css("--lr"), 1 * dpr, [1 * dpr, 2 * dpr]);
    if (c.planned_end_step) vline(c.planned_end_step, css("--plan"), 2 * dpr, [6 * dpr, 4 * dpr]);
    else if (c.max_steps !== c.steps) vline(c.max_steps, css("--plan"), 2 * dpr, [6 * dpr, 4 * dpr]);
    drawn.stop = {step: c.steps, px: vline(c.steps, css("--stop"), 2 * dpr, [])};
  }]};
  box.replaceChildren();
  const u = new uPlot(opts, [xs, ys], box);
  window.__charts.events = {u, drawn};
  observe(box, u);
}
function drawProgress(box, p) {
  const opts = baseOpts(box, 200);
  opts.scales = {x: {time: false}};
  opts.series = [{}, {label: p.unit, stroke: css("--accent"), width: 2, points: {show: p.points.length < 40}}];
  box.replaceChildren();
  const u = new uPlot(opts, [p.points.map((q) => q[0]), p.points.map((q) => q[1])], box);
  window.__charts.progress = {u};
  observe(box, u);
}
function observe(box, u) {
  if (!window.ResizeObserver) return;
  new ResizeObserver(() => { if (box.clientWidth && Math.abs(box.clientWidth - u.width) > 4) u.setSize({width: Math.max(240, box.clientWidth), height: u.height}); }).observe(box);
}

// ---- the page -----------------------------------------------------------------------------------------------------
function translate() {
  document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
  $("lang").value = state.lang;
  showEngine();
  for (const b of document.querySelectorAll("nav.tabs button")) {
    const on = b.dataset.tab === state.tab;
    b.setAttribute("aria-selected", on ? "true" : "false");
    b.tabIndex = on ? 0 : -1;
  }
}
function render() {
  translate();
  buildForm();
  compute();
}
async function start() {
  readURL();
  translate();  // the page's language and tab while the engine starts
  const [ok, meta] = await ask("/api/meta");
  state.meta = ok ? meta : {releases: [], schedulers: ["linear"], limits: {log_bytes: 8388608, config_bytes: 2097152}, newest: ""};
  $("releases").replaceChildren(...state.meta.releases.map((v) => el("option", {value: v})));
  readURL();
  if (state.fromExample && !TABS[state.tab].post) writeURL(false);
  render();
}
document.querySelector("nav.tabs").addEventListener("click", (e) => {
  const b = e.target.closest("button[data-tab]");
  if (!b || b.dataset.tab === state.tab) return;
  state.tab = b.dataset.tab; state.values = {...TABS[state.tab].example}; state.linkFiles = [];
  writeURL(true); render();
});
document.querySelector("nav.tabs").addEventListener("keydown", (e) => {
  if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
  const names = Object.keys(TABS), i = names.indexOf(state.tab) + (e.key === "ArrowRight" ? 1 : -1);
  const next = document.querySelector(`[data-tab="${names[(i + names.length) % names.length]}"]`);
  next.focus(); next.click();
});
$("lang").addEventListener("change", () => { state.lang = $("lang").value; writeURL(true); render(); });
$("copy-link").addEventListener("click", () => copyText(location.href, t("copied")));
window.addEventListener("popstate", () => { readURL(); render(); });
start();
