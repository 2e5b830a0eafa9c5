"""The skills extension (SEP-2640) half of the conformance fixtures.

Server: the skills of ``skills/`` beside this file, from the folder, served by
``fixture_server.py`` (``skill://pdf-processing/...`` has a subfolder for the directory
checks). Client: what ``fixture_client.py`` does in the ``sep-2640-client-*`` scenarios: list
the skills, and (but in ``no-prefetch``) load the first one, which the mock server has tampered
with: the verification error is the expected outcome, and nothing more is read.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from mcpbind.runtime.skills import SkillCatalog, SkillsClient, SkillVerificationError, skills_in

SKILLS = Path(__file__).resolve().parent / "skills"
logger = logging.getLogger("fixture_skills")


def catalog() -> SkillCatalog:
    return SkillCatalog(skills_in(SKILLS), page_size=1)


async def run_skills(client: Any, scenario: str) -> None:
    skills = SkillsClient(client)
    if skills.settings is None:
        return
    entries = await skills.list()
    if scenario == "sep-2640-client-no-prefetch" or not entries:
        return  # listing alone: no file is fetched before a skill is loaded
    try:
        await skills.load(entries[0])
    except SkillVerificationError as exc:
        logger.warning("skill not loaded (%s): %s", exc.reason, exc)
