module attributes {epl.config = {"communication.max_splits" = "many"}} {
}
