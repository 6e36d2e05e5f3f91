"""Tokenizers built on the spot, for tests and the CPU demo: no download, no model hub.

``build_tokenizer("chatml")`` trains a small byte-level BPE on a built-in
corpus and wraps it as a ``transformers.PreTrainedTokenizerFast`` with a real
chat template, so code under test meets the same API it meets with a real
model's tokenizer. Three templates are offered (ChatML as in Qwen2, Qwen3's, which
renders the last assistant message unlike earlier ones, and the Llama 3 header
format) so that tests can show no format is hard-coded.

Needs ``transformers`` and ``tokenizers`` (in ``agenthub[test]``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

TemplateName = Literal["chatml", "qwen3", "llama3"]

CHAT_TEMPLATES: dict[str, str] = {
    "chatml": (
        "{% for message in messages %}"
        "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
        "{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
    ),
    # Qwen3's behaviour without its tool branches: the last assistant message after the last user
    # message gets a think block (empty unless the reply has one); earlier ones are shown without it.
    "qwen3": (
        "{%- set ns = namespace(last_query=-1) %}"
        "{%- for message in messages %}{% if message['role'] == 'user' %}{% set ns.last_query = loop.index0 %}"
        "{% endif %}{% endfor %}"
        "{%- for message in messages %}"
        "{%- if message['role'] == 'assistant' %}"
        "{%- set content = message['content'] %}{% set reasoning = '' %}"
        "{%- if '</think>' in content %}"
        "{%- set reasoning = content.split('</think>')[0].split('<think>')[-1].strip('\n') %}"
        "{%- set content = content.split('</think>')[-1].lstrip('\n') %}"
        "{%- endif %}"
        "{%- if loop.index0 > ns.last_query and (loop.last or reasoning) %}"
        "{{- '<|im_start|>assistant\n<think>\n' + reasoning + '\n</think>\n\n' + content + '<|im_end|>\n' }}"
        "{%- else %}{{- '<|im_start|>assistant\n' + content + '<|im_end|>\n' }}{% endif %}"
        "{%- else %}{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{% endif %}"
        "{%- endfor %}"
        "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{% endif %}"
    ),
    "llama3": (
        "{{ bos_token }}"
        "{% for message in messages %}"
        "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] + '<|eot_id|>' }}"
        "{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
    ),
}

SPECIAL_TOKENS: dict[str, dict[str, str]] = {
    "chatml": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": "<|endoftext|>"},
    "qwen3": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": "<|endoftext|>"},
    "llama3": {"eos_token": "<|eot_id|>", "pad_token": "<|end_of_text|>", "bos_token": "<|begin_of_text|>"},
}
EXTRA_SPECIALS: dict[str, list[str]] = {
    "chatml": ["<|im_start|>"],
    "qwen3": ["<|im_start|>"],
    "llama3": ["<|start_header_id|>", "<|end_header_id|>"],
}

_CORPUS = (
    "You are playing a game. Find the secret number. Guess a number from 1 to 16.",
    "guess 1 guess 2 guess 3 guess 4 guess 5 guess 6 guess 7 guess 8 guess 9 guess 10",
    "guess 11 guess 12 guess 13 guess 14 guess 15 guess 16 higher lower correct you won",
    "Too high. Too low. The secret number is between. Turns left. Invalid action.",
    "craft get inventory go north south east west take open look pick up the red blue key door ball box",
    "Thought: Action: system user assistant observation reward done",
)


def build_tokenizer(
    template: TemplateName = "chatml", *, vocab_size: int = 512, corpus: Iterable[str] | None = None
) -> Any:
    """A ``PreTrainedTokenizerFast`` trained here, in a fraction of a second, deterministically."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if template not in CHAT_TEMPLATES:
        raise ValueError(f"unknown template {template!r}; choose one of {', '.join(CHAT_TEMPLATES)}")
    specials = sorted({*SPECIAL_TOKENS[template].values(), *EXTRA_SPECIALS[template]})
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(corpus) if corpus is not None else list(_CORPUS), trainer=trainer)
    fast = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tokenizer,
        additional_special_tokens=EXTRA_SPECIALS[template],
        **SPECIAL_TOKENS[template],
    )
    fast.chat_template = CHAT_TEMPLATES[template]
    return fast
