# The graphmem API. CPU torch first: a bare torch requirement pulls a multi-GB CUDA build.
FROM python:3.11-slim
WORKDIR /app
RUN pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md ./
COPY graphmem ./graphmem
COPY api ./api
COPY consolidation ./consolidation
COPY cypher ./cypher
RUN pip install --no-cache-dir .
# run as a user without privileges; keys and data live in volumes it owns
RUN useradd --create-home --uid 10001 graphmem && mkdir -p /keys /data \
    && chown graphmem:graphmem /keys /data
USER 10001:10001
ENV HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 GRAPHMEM_HOST=0.0.0.0 GRAPHMEM_PORT=8765
EXPOSE 8765
CMD ["graphmem", "serve"]
