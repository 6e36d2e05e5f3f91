# Pure parts of Search-R1's search_r1/search/retrieval_server.py (Apache-2.0, see LICENSE and README.md),
# pinned at a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06: the request model and the /retrieve handler,
# verbatim. Its module globals `config` and `retriever` are set by the test (the original builds
# them in __main__ from a FAISS or Lucene index, which are left out with torch and transformers).
from typing import List, Dict, Optional

from fastapi import FastAPI
from pydantic import BaseModel

config = None
retriever = None


class QueryRequest(BaseModel):
    queries: List[str]
    topk: Optional[int] = None
    return_scores: bool = False


app = FastAPI()

@app.post("/retrieve")
def retrieve_endpoint(request: QueryRequest):
    """
    Endpoint that accepts queries and performs retrieval.
    Input format:
    {
      "queries": ["What is Python?", "Tell me about neural networks."],
      "topk": 3,
      "return_scores": true
    }
    """
    if not request.topk:
        request.topk = config.retrieval_topk  # fallback to default

    # Perform batch retrieval
    results, scores = retriever.batch_search(
        query_list=request.queries,
        num=request.topk,
        return_score=request.return_scores
    )
    
    # Format response
    resp = []
    for i, single_result in enumerate(results):
        if request.return_scores:
            # If scores are returned, combine them with results
            combined = []
            for doc, score in zip(single_result, scores[i]):
                combined.append({"document": doc, "score": score})
            resp.append(combined)
        else:
            resp.append(single_result)
    return {"result": resp}
