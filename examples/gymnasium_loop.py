"""The gymnasium view of an agenthub env: reset/step with text spaces.

Run: python examples/gymnasium_loop.py
"""

from __future__ import annotations

import agenthub


def main() -> None:
    env = agenthub.make("guess")  # starts `agenthub serve env=guess` locally; close() stops it
    try:
        observation, info = env.reset(seed=123)
        print(observation)
        terminated = truncated = False
        for action in info["available_actions"]:  # a linear scan: guess 1, guess 2, ...
            observation, reward, terminated, truncated, info = env.step(action)
            print(f"> {action}\n  {observation}")
            if terminated or truncated:
                break
        print(f"reward: {reward}")
    finally:
        env.close()


if __name__ == "__main__":
    main()
