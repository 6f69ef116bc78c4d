# trainsteps plan --launch "$(tail -n +2 examples/swift_megatron/sft.sh)" --num-examples 1700
NPROC_PER_NODE=8 megatron sft --model Qwen/Qwen3-8B --dataset train.jsonl --packing true --max_length 8192 --tensor_model_parallel_size 1 --micro_batch_size 1 --global_batch_size 64 --num_train_epochs 1 --save_strategy epoch
