package versioned.core

import org.scalatest.funsuite.AnyFunSuite

class JsonSuite extends AnyFunSuite {
  test("readStrings reads what Jackson reads, with or without escapes") {
    val cases = Seq("[]", " [ ] ", """["a"]""", """[ "a" , "b" ]""", "[\"a\",\n\t\"b\"]\n", """["a\"b","c\\d"]""",
      "[\"\\u00e9x\",\"é\",\"日本\",\"😀\"]", """["",""]""", """[1, "x", true]""", """["a"] trailing""")
    cases.foreach(s => assert(Json.readStrings(s) == Json.readSeq(s).map(_.toString), s))
    cases.foreach(s => assert(Json.readStrings(s.getBytes("UTF-8")) == Json.readSeq(s).map(_.toString), s))
    val odd = Seq("a\"b", "tab\there", "é", "", "back\\slash", "\u0001")
    assert(Json.readStrings(Json.write(odd)) == odd)
    assert(Json.readStrings(Json.write(Seq("x", "y"))) == Seq("x", "y"))
    assert(Json.readStrings(Json.write(odd).getBytes("UTF-8")) == odd)
    assert(Json.readStrings(null: String) == Nil && Json.readStrings("") == Nil)
    assert(Json.readStrings(null: Array[Byte]) == Nil && Json.readStrings(Array.emptyByteArray) == Nil)
  }

  test("readStrings rejects malformed arrays like Jackson") {
    Seq("[", "[\"a\"", "[\"a\",]", "[\"a\" \"b\"]", "[\"a", "[\"a\tb\"]").foreach { s =>
      intercept[Exception](Json.readSeq(s))
      intercept[Exception](Json.readStrings(s))
      intercept[Exception](Json.readStrings(s.getBytes("UTF-8")))
    }
  }
}
