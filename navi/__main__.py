from navi.cli import main

main()
