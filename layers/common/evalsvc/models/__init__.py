"""Pydantic request/response models (the contract) and the domain types behind them."""
