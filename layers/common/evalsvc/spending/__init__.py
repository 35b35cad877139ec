"""What LLM work costs and what it used: the price table (`prices`) and the meter that keeps
usage as each call ends (`meter`). The monthly limits that meet storage are `logic.spending`."""
