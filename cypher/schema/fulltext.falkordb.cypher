// name: schema/fulltext
// dialect: falkordb
// purpose: full-text index over the pre-analysed keyword fields (no stemming, no stop words:
//          graphmem analyses text itself); the context field weighs half
// parameters: none
// returns: nothing
// mode: schema
CALL db.idx.fulltext.createNodeIndex({label: 'Memory', stopwords: [], language: 'english'}, {field: 'keywords', nostem: true}, {field: 'context_keywords', nostem: true, weight: 0.5})
