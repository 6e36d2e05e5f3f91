"""Play the built-in `guess` env from Python: a local server, the async client, a binary search.

Run: python examples/play_with_client.py
"""

from __future__ import annotations

import asyncio

from agenthub import EnvClient, LocalServer


async def play(url: str, task_id: int) -> int:
    async with EnvClient(url) as client, await client.create_session(task_id=task_id) as session:
        print(session.observation)
        low, high = 1, 16
        while True:
            guess = (low + high) // 2
            result = await session.step(f"guess {guess}")
            print(f"> guess {guess}\n  {result.observation}")
            if result.terminated:
                return int(result.reward)
            low, high = (guess + 1, high) if "too low" in result.observation else (low, guess - 1)


def main() -> None:
    with LocalServer("guess") as server:
        rewards = [asyncio.run(play(server.url, task_id)) for task_id in (10_000, 10_001)]
    print(f"rewards: {rewards}")


if __name__ == "__main__":
    main()
