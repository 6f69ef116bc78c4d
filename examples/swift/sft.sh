# ms-swift LoRA SFT on 4 GPUs; run `trainsteps plan --launch "$(tail -n +2 sft.sh)"` from examples/ to plan it.
NPROC_PER_NODE=4 swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora \
  --dataset llamafactory/data/demo_alpaca.json#1000 llamafactory/data/demo_chat.jsonl \
  --split_dataset_ratio 0.01 --per_device_train_batch_size 2 --num_train_epochs 3 --max_epochs 1
