"""Adapters for the agents' frameworks (LangGraph, LangChain, the OpenAI Agents SDK,
LlamaIndex): one module each, each importing its framework only there and installed with
its extra (``pip install "graphmem[langgraph]"``, ...; ``graphmem[agents]`` for all)."""
