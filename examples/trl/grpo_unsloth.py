# An Unsloth GRPO script (the shape of Unsloth's GRPO notebooks): `trainsteps plan grpo_unsloth.py --num-examples 7473`
# reads GRPOConfig's literal arguments with `ast` (the script is never run). Unsloth is imported first, so its
# GRPOConfig applies: GA x world x batch = 1 is not a multiple of num_generations = 6, so the per-device batch
# becomes 6, and the defaults not set here (logging every step, warmup 0.1) are Unsloth's.
from unsloth import FastLanguageModel  # noqa: I001  (first: Unsloth patches trl's config classes when imported)
from trl import GRPOConfig, GRPOTrainer

max_seq_length = 1024
max_prompt_length = 256

model, tokenizer = FastLanguageModel.from_pretrained("Qwen/Qwen2.5-3B-Instruct", max_seq_length=max_seq_length, load_in_4bit=True)

training_args = GRPOConfig(
    learning_rate=5e-6,
    optim="paged_adamw_8bit",
    per_device_train_batch_size=1,
    gradient_accumulation_steps=1,
    num_generations=6,
    max_prompt_length=max_prompt_length,
    max_completion_length=max_seq_length - max_prompt_length,
    max_steps=250,
    save_steps=250,
    output_dir="outputs",
)
trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[], args=training_args, train_dataset=None)
trainer.train()
