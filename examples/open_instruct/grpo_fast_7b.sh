# open-instruct's Qwen2.5-7B GRPO (scripts/train/qwen/grpo_fast_7b.sh, flags that decide steps): trainsteps plan --launch "$(tail -n +2 open_instruct/grpo_fast_7b.sh)"
python open_instruct/grpo_fast.py --exp_name qwen2.5_7b_grpo_fast_zero --beta 0.0 \
    --num_unique_prompts_rollout 48 --num_samples_per_prompt_rollout 16 \
    --dataset_mixer_list ai2-adapt-dev/math_ground_truth_zs 1.0 --dataset_mixer_list_splits train \
    --dataset_mixer_eval_list ai2-adapt-dev/math_ground_truth_zs 16 --dataset_mixer_eval_list_splits train \
    --max_prompt_token_length 2048 --response_length 4096 --pack_length 6144 --model_name_or_path Qwen/Qwen2.5-7B \
    --total_episodes 5000000 --deepspeed_stage 3 --per_device_train_batch_size 1 --num_mini_batches 1 \
    --num_learners_per_node 4 --num_epochs 1 --vllm_tensor_parallel_size 1 --vllm_num_engines 12 \
    --lr_scheduler_type linear --seed 1 --local_eval_every 30 --save_freq 40 --gradient_checkpointing
