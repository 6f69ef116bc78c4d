# slime's Qwen3-4B DAPO-math recipe (scripts/run-qwen3-4B.sh, flags that decide steps): trainsteps plan --launch "$(tail -n +2 slime/qwen3_4b.sh)"
python3 train.py --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate \
   --prompt-data /root/dapo-math-17k/dapo-math-17k.jsonl --input-key prompt --label-key label --apply-chat-template \
   --rollout-shuffle --rm-type deepscaler --num-rollout 3000 --rollout-batch-size 32 --n-samples-per-prompt 8 \
   --rollout-max-response-len 8192 --rollout-temperature 1 --global-batch-size 256 --balance-data \
   --eval-interval 20 --eval-prompt-data aime /root/aime-2024/aime-2024.jsonl --n-samples-per-eval-prompt 16 \
   --save /root/Qwen3-4B_slime/ --save-interval 20 --optimizer adam --lr 1e-6 --lr-decay-style constant \
   --rollout-num-gpus-per-engine 2
