# OpenRLHF 0.11 (nested option names): trainsteps plan --launch "$(tail -n +2 openrlhf/reinforce_ray.sh)" --num-examples 30000
python3 -m openrlhf.cli.train_ppo_ray \
   --data.prompt_dataset OpenRLHF/prompt-collection-v0.1 \
   --data.max_samples 100000 \
   --train.batch_size 128 \
   --train.micro_batch_size 8 \
   --rollout.batch_size 1024 \
   --rollout.micro_batch_size 16 \
   --rollout.n_samples_per_prompt 4 \
   --rollout.max_new_tokens 1024 \
   --train.num_episodes 2 \
   --train.max_epochs 1 \
   --actor.lr_warmup_ratio 0.03 \
   --algo.advantage.estimator reinforce \
   --ckpt.save_steps 10
