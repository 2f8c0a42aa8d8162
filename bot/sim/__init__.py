"""A GitHub simulator: the REST API subset the bot uses, App auth, signed webhooks, faults."""

from bot.sim.expect import check_expectations
from bot.sim.record import TimelineEntry, Write
from bot.sim.scenario import Scenario, ScenarioError, builtin_scenario, load_scenario
from bot.sim.server import Simulator

__all__ = [
    "Scenario",
    "ScenarioError",
    "Simulator",
    "TimelineEntry",
    "Write",
    "builtin_scenario",
    "check_expectations",
    "load_scenario",
]
